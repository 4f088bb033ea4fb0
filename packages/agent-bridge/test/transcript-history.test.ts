/**
 * `/status` history from transcript lines (`history.ts`), on the recorded real transcripts. The fixtures
 * were recorded with bare string texts on stdin; here each user text gets the header the bridge writes
 * (`renderUserMessage`), so the header stripping is exercised on the real line shapes. (The bridge writes
 * content arrays, which the CLI records differently: `transcript-status.test.ts` covers that live.)
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderUserMessage, stripMessageHeader } from '../src/io/delivery/user-input.js';
import {
  addHistory,
  HISTORY_KEPT,
  HISTORY_TEXT_CHARS,
  type HistoryEntry,
  historyEntryOf,
  mayBeHistory,
} from '../src/io/transcript/history.js';
import { userMessage } from './frames.js';

/** The text the bridge writes for a Telegram message: the header line, then the text. */
const withHeader = (text: string): string => {
  const line = JSON.parse(renderUserMessage(userMessage('ib-1', text))) as {
    message: { content: { text: string }[] };
  };
  return line.message.content.at(-1)?.text ?? '';
};

/** The history a fixture transcript makes, read line by line as the tail hands them over. */
const historyOf = (...names: string[]): HistoryEntry[] => {
  const history: HistoryEntry[] = [];
  for (const name of names) {
    const text = readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
    for (const raw of text.split('\n')) {
      if (!raw) continue;
      const value = JSON.parse(raw) as Record<string, unknown>;
      // What the bridge would have written: the header before each Telegram text.
      const message = value.message as { content?: unknown } | undefined;
      if (value.type === 'user' && typeof message?.content === 'string' && !/^[<[]/.test(message.content))
        message.content = withHeader(message.content);
      const attachment = value.attachment as { type?: string; prompt?: unknown } | undefined;
      if (attachment?.type === 'queued_command' && typeof attachment.prompt === 'string')
        attachment.prompt = withHeader(attachment.prompt);
      if (!mayBeHistory(JSON.stringify(value))) continue;
      const entry = historyEntryOf(value, 0);
      if (entry) addHistory(history, entry);
    }
  }
  return history;
};
const brief = (history: HistoryEntry[]): string[] => history.map((e) => `${e.role}: ${e.text}`);

describe('history from the transcript', () => {
  it('a steer appears where the CLI took it, between the turn’s texts', () => {
    expect(brief(historyOf('steer.transcript.jsonl'))).toEqual([
      'user: do the slow thing',
      'user: also mention this',
      'assistant: Noted your extra message.',
    ]);
  });

  it('a reply’s texts around its tool calls make one entry', () => {
    expect(brief(historyOf('parallel-tools.transcript.jsonl'))).toEqual([
      'user: write two files',
      'assistant: Writing two files.\n\nBoth written.',
    ]);
  });

  it('/clear is kept as the user sent it and history goes on in the new session file', () => {
    expect(brief(historyOf('clear.transcript.jsonl', 'clear.transcript-2.jsonl'))).toEqual([
      'user: first message',
      'assistant: First answer.',
      'user: /clear',
      'user: second message',
      'assistant: Second answer, new session.',
    ]);
  });

  it('leaves out the task notification the CLI queues for itself and the sub-agent’s lines', () => {
    const history = brief(historyOf('subagent.transcript.jsonl', 'subagent.subagent-1.jsonl'));
    expect(history[0]).toBe('user: delegate a task');
    expect(history.join('\n')).not.toContain('task-notification');
    expect(history.join('\n')).not.toContain('Note written.'); // the sub-agent's own text
    expect(history.at(-1)).toBe('assistant: Started it.\n\nThe sub-agent wrote the note.');
  });

  it('leaves out the CLI’s own API error text', () => {
    expect(brief(historyOf('api-529-exhausted.transcript.jsonl'))).toEqual(['user: hello']);
  });

  it('carries the line’s timestamp and cuts long texts', () => {
    const entry = historyEntryOf(
      {
        type: 'assistant',
        timestamp: '2026-11-30T00:38:20.639Z',
        message: { model: 'm', content: [{ type: 'text', text: 'z'.repeat(2000) }] },
      },
      5,
    );
    expect(entry?.at).toBe(Date.parse('2026-11-30T00:38:20.639Z'));
    expect(entry?.text).toHaveLength(HISTORY_TEXT_CHARS);
    expect(entry?.text.endsWith('…')).toBe(true);
  });

  it('stamps a line without a timestamp with the caller’s now', () => {
    const entry = historyEntryOf(
      { type: 'assistant', message: { model: 'm', content: [{ type: 'text', text: 'hi' }] } },
      1234,
    );
    expect(entry?.at).toBe(1234);
  });

  it('is bounded, and drops a line seen twice (a rewritten session file)', () => {
    const history: HistoryEntry[] = [];
    for (let i = 0; i < 40; i++)
      addHistory(history, { role: i % 2 ? 'assistant' : 'user', text: `t${i}`, at: 1000 + i });
    expect(history).toHaveLength(HISTORY_KEPT);
    expect(history.at(-1)?.text).toBe('t39');
    const copy = { ...(history.at(-2) as HistoryEntry) };
    addHistory(history, copy);
    addHistory(history, { role: 'assistant', text: 't39', at: 1039 });
    expect(history.at(-1)?.text).toBe('t39');
    expect(history).toHaveLength(HISTORY_KEPT);
  });
});

describe('stripMessageHeader', () => {
  it('removes exactly the header line, whatever the quoted values hold', () => {
    const message = {
      ...userMessage('ib-7', 'line one\nline two'),
      replyTo: { messageId: 3, text: 'quoted ] with\nnewline [telegram x]' },
    };
    const line = JSON.parse(renderUserMessage(message)) as { message: { content: { text: string }[] } };
    expect(stripMessageHeader(line.message.content[0]?.text ?? '')).toBe('line one\nline two');
  });

  it('answers undefined for text without the header', () => {
    expect(stripMessageHeader('<task-notification>…')).toBeUndefined();
    expect(stripMessageHeader('[telegram not really')).toBeUndefined();
  });
});
