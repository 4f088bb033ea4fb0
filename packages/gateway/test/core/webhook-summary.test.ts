import { describe, expect, it } from 'vitest';
import {
  githubRunText,
  githubSummary,
  line,
  SUMMARY_MAX,
  webhookNote,
} from '../../src/core/automation/webhook-summary.js';

const repository = { full_name: 'acme/app', html_url: 'https://github.com/acme/app' };
const user = { login: 'ada' };

describe('GitHub summaries', () => {
  it.each<[string, unknown, string]>([
    [
      'workflow_run',
      {
        action: 'completed',
        repository,
        workflow_run: {
          name: 'CI',
          status: 'completed',
          conclusion: 'failure',
          head_branch: 'main',
          display_title: 'Fix the parser',
          html_url: 'https://github.com/acme/app/actions/runs/1',
        },
      },
      '[acme/app] workflow_run completed: CI · failure · on main · “Fix the parser” · https://github.com/acme/app/actions/runs/1',
    ],
    [
      'workflow_run',
      { action: 'requested', repository, workflow_run: { name: 'CI', status: 'queued', conclusion: null } },
      '[acme/app] workflow_run requested: CI · queued',
    ],
    [
      'pull_request',
      {
        action: 'closed',
        repository,
        pull_request: { number: 12, title: 'Add\nthings', merged: true, user, html_url: 'https://x/pr/12' },
      },
      '[acme/app] pull_request closed: #12 “Add things” · (merged) · by ada · https://x/pr/12',
    ],
    [
      'issues',
      { action: 'opened', repository, issue: { number: 5, title: 'Crash', user, html_url: 'https://x/i/5' } },
      '[acme/app] issues opened: #5 “Crash” · by ada · https://x/i/5',
    ],
    [
      'issue_comment',
      {
        action: 'created',
        repository,
        issue: { number: 5, title: 'Crash' },
        comment: { user, html_url: 'https://x/i/5#c' },
      },
      '[acme/app] issue_comment created: on #5 “Crash” · by ada · https://x/i/5#c',
    ],
    [
      'push',
      {
        ref: 'refs/heads/main',
        repository,
        commits: [{}, {}],
        pusher: { name: 'ada' },
        compare: 'https://x/compare',
      },
      '[acme/app] push: 2 commits · to main · by ada · https://x/compare',
    ],
    [
      'check_run',
      {
        action: 'completed',
        repository,
        check_run: { name: 'lint', conclusion: 'success', html_url: 'https://x/c' },
      },
      '[acme/app] check_run completed: lint · success · https://x/c',
    ],
    ['star', { action: 'created', repository }, '[acme/app] star created'],
    ['workflow_run', 'not an object', 'workflow_run'],
    ['push', { repository: { full_name: 42 }, commits: 'x' }, 'push'],
  ])('%s', (event, payload, expected) => {
    expect(githubSummary(event, payload)).toBe(expected);
  });

  it('a summary is one line of bounded length whatever the payload holds', () => {
    const summary = githubSummary('issues', {
      action: 'opened',
      repository,
      issue: { number: 1, title: `line one\n\nline two ${'x'.repeat(1000)}` },
    });
    expect(summary).not.toMatch(/\n/);
    expect(summary.length).toBe(SUMMARY_MAX);
    expect(summary.endsWith('…')).toBe(true);
  });

  it('the run names the hook, the event and the delivery, and the note what happened', () => {
    const text = githubRunText('github', 'workflow_run', 'd-1', 'SUMMARY');
    expect(text).toBe(
      'Webhook "github" received the GitHub event workflow_run (delivery d-1):\nSUMMARY\nThe full payload is attached as a JSON file.',
    );
    expect(webhookNote('github', line('a\nb'))).toBe('🪝 github · a b');
  });
});
