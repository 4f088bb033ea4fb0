import { describe, expect, it } from 'vitest';
import { LABEL_MAX, toolGroupSummary, toolLabel, urlHost } from '../src/index.js';

describe('toolLabel', () => {
  it("shows a file the agent sent as a 📎 step with the file's name, not the tool's", () => {
    expect(toolLabel('mcp__switchyard__send_file', { path: '/work/out/report.pdf', caption: 'x' })).toBe(
      '📎 report.pdf',
    );
    expect(toolLabel('mcp__switchyard__send_photo', { path: 'chart.png' })).toBe('📎 chart.png');
    expect(toolLabel('mcp__switchyard__send_files', { paths: ['a.png', 'dir/b.png'] })).toBe(
      '📎 a.png, b.png',
    );
    expect(toolLabel('mcp__switchyard__send_files', { paths: ['a', 'b', 'c'] })).toBe('📎 3 files: a, b, c');
    expect(toolLabel('mcp__switchyard__send_file', { path: 42 })).toBe('📎 a file');
    expect(
      toolLabel('mcp__switchyard__send_file', { path: `${'x'.repeat(200)}.pdf` }).length,
    ).toBeLessThanOrEqual(LABEL_MAX);
    expect(toolGroupSummary('mcp__switchyard__send_file', 3)).toBe('📎 Sent 3 files');
  });

  it('names the file for Read, Edit and Write, keeping the end of a long path', () => {
    expect(toolLabel('Read', { file_path: 'src/app.ts' })).toBe('Read src/app.ts');
    expect(toolLabel('Edit', { file_path: 'README.md' })).toBe('Edit README.md');
    const long = `/home/me/${'deep/'.repeat(30)}file.ts`;
    const label = toolLabel('Write', { file_path: long });
    expect(label.startsWith('Write …/')).toBe(true);
    expect(label.endsWith('/file.ts')).toBe(true);
    expect(label.length).toBeLessThanOrEqual(LABEL_MAX);
  });

  it('prefers the description of a Bash call, else its command on one line', () => {
    expect(toolLabel('Bash', { command: 'npm test', description: 'Run the tests' })).toBe(
      'Bash: Run the tests',
    );
    expect(toolLabel('Bash', { command: 'npm ci &&\n  npm test' })).toBe('Bash: npm ci && npm test');
  });

  it('shows the pattern for Grep and Glob, the host for WebFetch, the query for WebSearch', () => {
    expect(toolLabel('Grep', { pattern: 'loadConfig' })).toBe('Grep: loadConfig');
    expect(toolLabel('Glob', { pattern: '**/*.ts' })).toBe('Glob: **/*.ts');
    expect(toolLabel('WebFetch', { url: 'https://Docs.Example.com:443/a/b?c=d' })).toBe(
      'WebFetch: docs.example.com',
    );
    expect(toolLabel('WebSearch', { query: 'grammy runner' })).toBe('WebSearch: grammy runner');
  });

  it('shows the description for Task and Agent', () => {
    expect(toolLabel('Task', { description: 'Find the loader', subagent_type: 'Explore' })).toBe(
      'Task: Find the loader',
    );
    expect(toolLabel('Agent', { subagent_type: 'Explore' })).toBe('Agent: Explore');
  });

  it('falls back to the name for unknown tools and for inputs of the wrong type', () => {
    expect(toolLabel('Frobnicate', { anything: 1 })).toBe('Frobnicate');
    expect(toolLabel('Read', { file_path: 42 })).toBe('Read');
    expect(toolLabel('mcp__github__create_issue', {})).toBe('github: create_issue');
  });

  it('cuts a long label at a word boundary with an ellipsis', () => {
    const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho';
    const label = toolLabel('Bash', { description: words });
    expect(label.length).toBeLessThanOrEqual(LABEL_MAX);
    expect(label.endsWith('…')).toBe(true);
    const lastWord = label.slice(0, -1).split(' ').at(-1) ?? '';
    expect(words.split(' ')).toContain(lastWord);
  });
});

describe('urlHost', () => {
  it('reads the host of absolute URLs only, without user info or port', () => {
    expect(urlHost('http://user:pw@example.org:8080/x')).toBe('example.org');
    expect(urlHost('not a url')).toBeUndefined();
  });
});

describe('toolGroupSummary', () => {
  it('says what a run of one tool did', () => {
    expect(toolGroupSummary('Read', 12)).toBe('Read 12 files');
    expect(toolGroupSummary('Bash', 3)).toBe('Ran 3 commands');
    expect(toolGroupSummary('Mystery', 2)).toBe('Mystery ×2');
  });
});
