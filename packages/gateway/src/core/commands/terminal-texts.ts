/**
 * What `/resume` and `/handoff` say, pure: the page of a working directory's Claude sessions with a
 * button for each one that may be continued (and paging), and the command that continues a handed-off
 * session at the terminal. The shell (`io/commands/terminal-commands.ts`) sends them and keeps the buttons'
 * tokens.
 *
 * In a group every member reads along: a session's first words, the working directory and the CLI's
 * config directory are the operator's and the session owner's, so a group is shown none of them
 * ({@link inGroup}); the private chat's `/resume` and `/handoff` say them.
 */
import { escapeHtml } from '@switchyard/card';
import type { FrameOf, SessionInfo } from '@switchyard/protocol/common';
import type { InlineButton } from './command-texts.js';

/** What a `/resume`, `/handoff` or worktree button does (kept server-side, behind its token). */
export type TerminalAction =
  | { kind: 'resume'; sessionId: string }
  | { kind: 'page'; page: number }
  | { kind: 'handoff_now' }
  | { kind: 'worktree_remove' };

/** `YYYY-MM-DD HH:MM` UTC of a time (ms since the epoch), by arithmetic: a core reads no calendar. */
export function utcStamp(at: number): string {
  const minutes = Math.floor(at / 60_000);
  const days = Math.floor(minutes / 1440);
  const minuteOfDay = minutes - days * 1440;
  // Days since 1970-01-01 to a civil date (Hinnant's algorithm).
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${year}-${two(month)}-${two(day)} ${two(Math.floor(minuteOfDay / 60))}:${two(minuteOfDay % 60)}`;
}

/** A duration as a glance: `40 s`, `12 min`, `3 h 5 min`, `2 d`. */
export function shortDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`;
  return `${Math.round(h / 24)} d`;
}

/** Whether `route` is a group's (or a channel's): its members read what the bot says there. */
export function inGroup(route: { chatId: number }): boolean {
  return route.chatId < 0;
}

/** Buttons per row on a `/resume` page. */
const BUTTONS_PER_ROW = 3;

/**
 * The `/resume` page: one numbered line per session (when it started, how long it ran, its first words),
 * a "▶ N" button for each that may be continued, and "newer"/"older" buttons; `button` makes a
 * button's callback data (a server-side token).
 */
export function resumeListView(
  list: FrameOf<'resume_list'>,
  button: (action: TerminalAction) => string,
): { text: string; buttons: InlineButton[][] } {
  const { pageSize } = list;
  const group = inGroup(list.route);
  const where = group ? 'this conversation’s working directory' : list.workDir;
  if (list.error)
    return {
      text: group
        ? 'Could not list the sessions (the agent’s log says why).'
        : `Could not list the sessions: ${list.error}`,
      buttons: [],
    };
  if (list.total === 0) return { text: `No Claude sessions in ${where} yet.`, buttons: [] };
  const first = list.page * pageSize;
  const lines = list.sessions.map((s, i) => {
    const when = s.startedAt !== undefined ? utcStamp(s.startedAt) : utcStamp(s.lastAt);
    const long = s.startedAt !== undefined ? ` · ${shortDuration(s.lastAt - s.startedAt)}` : '';
    // A session's words are its owner's: not read out to a group.
    const words = group ? '' : s.firstText ? ` — “${s.firstText}”` : ' — (no message)';
    const note = s.current ? ' · this conversation’s' : s.busy ? ` · 🔒 ${s.busy}` : '';
    return `${first + i + 1}. ${when} UTC${long}${words}${note}`;
  });
  const pressable = list.sessions.flatMap((s, i) =>
    s.busy || s.current
      ? []
      : [{ text: `▶ ${first + i + 1}`, callback_data: button({ kind: 'resume', sessionId: s.sessionId }) }],
  );
  const rows: InlineButton[][] = [];
  for (let i = 0; i < pressable.length; i += BUTTONS_PER_ROW)
    rows.push(pressable.slice(i, i + BUTTONS_PER_ROW));
  const pages = Math.ceil(list.total / pageSize);
  const nav = [
    ...(list.page > 0
      ? [{ text: '◀ Newer', callback_data: button({ kind: 'page', page: list.page - 1 }) }]
      : []),
    ...(list.page < pages - 1
      ? [{ text: 'Older ▶', callback_data: button({ kind: 'page', page: list.page + 1 }) }]
      : []),
  ];
  if (nav.length > 0) rows.push(nav);
  return {
    text: [
      `Claude sessions in ${where} (${list.total}, newest first${pages > 1 ? `, page ${list.page + 1} of ${pages}` : ''}):`,
      ...lines,
      '',
      'Press ▶ N to continue that session here: this conversation’s Claude process stops, and your next message resumes it.',
    ].join('\n'),
    buttons: rows,
  };
}

/** A word for a POSIX shell, quoted when it needs to be. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The command that continues a handed-off session at the terminal. */
export function resumeCommand(workDir: string, sessionId: string, configDir?: string): string {
  const env = configDir !== undefined ? `CLAUDE_CONFIG_DIR=${shellWord(configDir)} ` : '';
  return `cd ${shellWord(workDir)} && ${env}claude --resume ${shellWord(sessionId)}`;
}

/** What a finished handoff says (Telegram HTML: the command in a copyable code block). */
export function handoffHtml(
  result: FrameOf<'handoff_result'> & { sessionId: string; workDir: string },
): string {
  if (inGroup(result.route))
    return [
      'Handed off: no Claude process runs on this conversation’s session here, and none starts until your next message. Continue it at the terminal, in the agent’s working directory (with its CLAUDE_CONFIG_DIR, if it sets one: /handoff in a private chat with me shows both), with:',
      `<pre><code class="language-sh">${escapeHtml(`claude --resume ${shellWord(result.sessionId)}`)}</code></pre>`,
      'When you are back here, just write: if the terminal still has the session open, I say so and wait for it.',
    ].join('\n');
  return [
    'Handed off: no Claude process runs on this conversation’s session here, and none starts until your next message. Continue at the terminal with:',
    `<pre><code class="language-sh">${escapeHtml(resumeCommand(result.workDir, result.sessionId, result.configDir))}</code></pre>`,
    'When you are back here, just write: if the terminal still has the session open, I say so and wait for it.',
  ].join('\n');
}

/** The worktree button of a `/sessions` row, for a conversation that has a worktree. */
export function worktreeButtons(
  info: SessionInfo,
  index: number,
  button: (action: TerminalAction) => string,
): InlineButton[] {
  return info.worktree
    ? [{ text: `🗑 Reset ${index + 1} + worktree`, callback_data: button({ kind: 'worktree_remove' }) }]
    : [];
}
