import { describe, expect, it } from 'vitest';
import { formatUsd, historyText, sessionsView, statusText } from '../../src/core/commands/command-texts.js';
import { COMMAND_TABLE, COMMANDS, helpText, parseCommand } from '../../src/core/commands/commands.js';

const MODELS = ['opus', 'sonnet'];

describe('command table', () => {
  it.each([
    ['not a command', 'hello /stop', undefined],
    ['a plain command', '/stop', { name: 'stop' }],
    ['a command in capitals, spaced', '  /STATUS  ', { name: 'status' }],
    ['/new is its own command', '/new', { name: 'new' }],
    ['start is understood though not in the menu', '/start', { name: 'start' }],
    ['addressed to this bot', '/stop@MyBot', { name: 'stop' }],
    ['addressed to another bot', '/stop@OtherBot', { name: 'ignored' }],
    ['arguments where none are taken', '/pins all', { name: 'invalid', reply: '/pins takes no arguments.' }],
    ['an alias with arguments', '/new x', { name: 'invalid', reply: '/new takes no arguments.' }],
    ['rename with a title', '/rename  Big plan ', { name: 'rename', title: 'Big plan' }],
    ['rename without one', '/rename', { name: 'invalid', reply: 'Give the new name: /rename NAME.' }],
    [
      'rename too long',
      `/rename ${'x'.repeat(201)}`,
      { name: 'invalid', reply: 'A name is at most 200 characters.' },
    ],
    ['model shown', '/model', { name: 'model', model: undefined }],
    ['model set', '/model sonnet', { name: 'model', model: 'sonnet' }],
    [
      'model unknown',
      '/model gpt',
      { name: 'invalid', reply: 'Unknown model "gpt". Valid models: opus, sonnet.' },
    ],
    ['mode set, any case', '/mode PLAN', { name: 'mode', mode: 'plan' }],
    ['mode shown', '/mode', { name: 'mode', mode: undefined }],
  ])('%s: %j', (_what, text, parsed) => {
    expect(parseCommand(text, 'mybot', MODELS)).toEqual(parsed);
  });

  it('any model goes when none are configured; an unknown mode lists the valid ones', () => {
    expect(parseCommand('/model anything', undefined, [])).toEqual({ name: 'model', model: 'anything' });
    expect(parseCommand('/mode yolo', undefined, [])).toMatchObject({
      name: 'invalid',
      reply: expect.stringMatching(/^Unknown mode "yolo"\. Valid modes: default, /),
    });
  });

  it('an unknown command lists the menu, which is the table without its hidden rows, in order', () => {
    expect(COMMANDS.map((c) => c.command)).toEqual(
      Object.keys(COMMAND_TABLE).filter((name) => name !== 'start'),
    );
    expect(parseCommand('/nope', undefined, MODELS)).toEqual({
      name: 'invalid',
      reply: `Unknown command /nope. Commands: ${COMMANDS.map((c) => `/${c.command}`).join(' ')}.`,
    });
    expect(parseCommand('/hasOwnProperty', undefined, MODELS)).toMatchObject({ name: 'invalid' });
    expect(helpText('demo').split('\n').slice(2)).toEqual(
      COMMANDS.map((c) => `/${c.command} — ${c.description}`),
    );
  });
});

describe('command texts', () => {
  const status = {
    bridgeConnected: true,
    agentState: 'idle',
    model: 'opus',
    mode: 'default',
    runningTurns: [{ turnId: 't1' }],
    inbox: 2,
    openPrompts: 0,
    pins: 1,
    lastError: undefined,
    polling: { ok: false, error: 'conflict' },
  };

  it('status: the facts, one per line, cost only when known', () => {
    expect(statusText(status).split('\n')).toEqual([
      'Conversation: idle',
      'Bridge: connected',
      'Model: opus · Mode: default',
      'Current turn: t1',
      'Queue: 2 message(s) waiting for the agent',
      'Open prompts: 0 · Pinned cards: 1',
      'Telegram polling: failing (conflict)',
      'Last error: none',
    ]);
    expect(statusText(status, undefined, 0.5, true)).toContain(
      'Cost so far: $0.500 (simulated: nothing was spent)',
    );
    expect([formatUsd(0.1234), formatUsd(12.345)]).toEqual(['$0.123', '$12.35']);
  });

  it('sessions: most recent first, one stop and one reset button each', () => {
    const view = sessionsView(
      [
        { route: { chatId: 5 }, live: false, state: 'exited', queued: 0, costUsd: 0, lastActiveAt: 1 },
        {
          route: { chatId: -9, threadId: 3 },
          name: 'ops',
          live: true,
          state: 'idle',
          queued: 2,
          costUsd: 1,
          lastActiveAt: 2,
        },
      ] as never,
      (action, route) => `${action}:${route.chatId}`,
    );
    expect(view.text.split('\n').slice(0, 3)).toEqual([
      '2 conversation(s):',
      '1. ops — live, idle · 2 queued · $1.00',
      '2. private chat 5 — idle (no process) · $0.000',
    ]);
    expect(view.buttons.map((row) => row.map((b) => b.callback_data))).toEqual([
      ['stop:-9', 'reset:-9'],
      ['stop:5', 'reset:5'],
    ]);
    expect(sessionsView([], () => '')).toEqual({ text: 'No conversations yet.', buttons: [] });
  });

  it('history: empty without one, else the last six as short UTC lines', () => {
    expect(historyText(undefined)).toBe('');
    // 2023-11-14T22:13:20Z
    expect(historyText([{ role: 'user', text: 'x', at: 1_700_000_000_000 }] as never)).toBe(
      'Recently (UTC):\n22:13 👤 x',
    );
    const history = Array.from({ length: 8 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      text: `m${i}`,
      at: i * 60_000,
    }));
    const lines = historyText(history as never).split('\n');
    expect(lines).toEqual([
      'Recently (UTC):',
      '00:02 👤 m2',
      '00:03 🤖 m3',
      '00:04 👤 m4',
      '00:05 🤖 m5',
      '00:06 👤 m6',
      '00:07 🤖 m7',
    ]);
  });
});
