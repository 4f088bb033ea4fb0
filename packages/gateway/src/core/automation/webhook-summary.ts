/**
 * What a webhook delivery says in words: one short line for the GitHub events people act on
 * (repository, event, action, conclusion, link), and the message text and chat note of the run it
 * becomes. Pure: the payload is the parsed JSON body, read defensively (any field may be missing or of
 * another type; nothing here throws).
 *
 * A summary is one line of at most {@link SUMMARY_MAX} characters: line breaks in titles and names are
 * flattened, so a pull request's title cannot put lines of its own into the message.
 */

/** The longest summary line. */
export const SUMMARY_MAX = 300;

/** The one-line summary of a GitHub event (see the module comment). */
export function githubSummary(event: string, payload: unknown): string {
  const p = record(payload);
  const name = record(p.repository).full_name;
  const repo = typeof name === 'string' ? str(name) : undefined;
  const action = str(p.action);
  const head = [repo ? `[${repo}]` : undefined, event, action].filter(Boolean).join(' ');
  const detail = describe(event, p);
  return line(detail ? `${head}: ${detail}` : head);
}

/** Describes the known events; `undefined` for others (the head line alone is said). */
function describe(event: string, p: Record<string, unknown>): string | undefined {
  switch (event) {
    case 'workflow_run': {
      const run = record(p.workflow_run);
      return parts(
        str(run.name),
        outcome(run),
        on(str(run.head_branch)),
        str(run.display_title) && `“${str(run.display_title)}”`,
        str(run.html_url),
      );
    }
    case 'workflow_job': {
      const job = record(p.workflow_job);
      return parts(str(job.name), outcome(job), on(str(job.head_branch)), str(job.html_url));
    }
    case 'check_run': {
      const check = record(p.check_run);
      return parts(str(check.name), outcome(check), str(check.html_url));
    }
    case 'check_suite': {
      const suite = record(p.check_suite);
      return parts(outcome(suite), on(str(suite.head_branch)), str(record(p.repository).html_url));
    }
    case 'pull_request': {
      const pr = record(p.pull_request);
      const merged = p.action === 'closed' && pr.merged === true ? '(merged)' : undefined;
      return parts(numbered(pr), merged, by(pr.user), str(pr.html_url));
    }
    case 'pull_request_review': {
      const review = record(p.review);
      return parts(
        numbered(record(p.pull_request)),
        str(review.state),
        by(review.user),
        str(review.html_url),
      );
    }
    case 'issues':
      return parts(numbered(record(p.issue)), by(record(p.issue).user), str(record(p.issue).html_url));
    case 'issue_comment': {
      const comment = record(p.comment);
      return parts(`on ${numbered(record(p.issue)) ?? 'an issue'}`, by(comment.user), str(comment.html_url));
    }
    case 'push': {
      const commits = Array.isArray(p.commits) ? p.commits.length : undefined;
      const ref = str(p.ref)?.replace(/^refs\/heads\//, '');
      return parts(
        commits === undefined ? undefined : `${commits} commit${commits === 1 ? '' : 's'}`,
        ref && `to ${ref}`,
        by(p.pusher ?? p.sender),
        str(p.compare),
      );
    }
    case 'release': {
      const release = record(p.release);
      return parts(str(release.tag_name), str(release.name), str(release.html_url));
    }
    default:
      return undefined;
  }
}

/** The chat note of a delivery: why the agent talks now. */
export function webhookNote(hook: string, summary: string): string {
  return line(`🪝 ${hook} · ${summary}`);
}

/** What reaches Claude for a GitHub delivery. */
export function githubRunText(hook: string, event: string, deliveryId: string, summary: string): string {
  return [
    `Webhook "${hook}" received the GitHub event ${event} (delivery ${deliveryId}):`,
    summary,
    'The full payload is attached as a JSON file.',
  ].join('\n');
}

/** What reaches Claude for a generic delivery; `preview` is the start of its body. */
export function genericRunText(hook: string, deliveryId: string, preview: string): string {
  return [
    `Webhook "${hook}" received a delivery (${deliveryId}):`,
    line(preview) || '(empty body)',
    'The full body is attached as a file.',
  ].join('\n');
}

/** One line, at most {@link SUMMARY_MAX} characters. */
export function line(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= SUMMARY_MAX ? flat : `${flat.slice(0, SUMMARY_MAX - 1)}…`;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function str(value: unknown): string | undefined {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function parts(...values: Array<string | undefined | false>): string | undefined {
  const kept = values.filter((v): v is string => typeof v === 'string' && v !== '');
  return kept.length > 0 ? kept.join(' · ') : undefined;
}

/** A run's, job's or check's conclusion once it has one, else its status. */
function outcome(item: Record<string, unknown>): string | undefined {
  return str(item.conclusion) ?? str(item.status);
}

function on(branch: string | undefined): string | undefined {
  return branch && `on ${branch}`;
}

function by(user: unknown): string | undefined {
  const u = record(user);
  const login = str(u.login) ?? str(u.name);
  return login && `by ${login}`;
}

/** `#12 “Title”` of an issue or pull request. */
function numbered(item: Record<string, unknown>): string | undefined {
  const number = str(item.number);
  const title = str(item.title);
  if (!number && !title) return undefined;
  return [number && `#${number}`, title && `“${title}”`].filter(Boolean).join(' ');
}
