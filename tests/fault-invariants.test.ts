/**
 * The fault matrix's invariant checker on hand-made evidence: it must name each broken promise, so a
 * matrix run that passes means something. Pure: no processes, milliseconds.
 */
import { describe, expect, it } from 'vitest';
import { answerTo, checkInvariants, type Evidence, question } from './faults/invariants.js';

const KEYBOARD = { inline_keyboard: [[{ text: '✅ Allow', callback_data: 'p:0123456789abcdef:a' }]] };

/** A request body: the user's question, the model's Bash call, and the CLI's results for it. */
function request(token: string, results: { is_error?: boolean }[], callId = 'toolu_1') {
  return {
    messages: [
      { role: 'user', content: [{ type: 'text', text: question(token) }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: callId, name: 'Bash', input: { command: `echo ${token} >> log` } }],
      },
      ...results.map((r) => ({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: callId, content: '', ...r }],
      })),
    ],
  };
}

/** A prompted turn in one private chat that kept every promise; `over` breaks one. */
function evidence(over: Partial<Evidence> = {}): Evidence {
  const token = 'q-a-1';
  return {
    conversations: [{ name: 'a', chatId: 1, sent: [token], interrupted: [], prompted: [token] }],
    botMessages: [
      [
        { messageId: 1, text: `🔐 Bash: echo ${token} >> log\n✅ Allowed` },
        { messageId: 2, text: answerTo(token) },
      ],
    ],
    pinned: [[]],
    requests: [request(token, [{}])],
    logs: '',
    secrets: ['secret'],
    promptAnswers: [{ id: 'cb1', answers: 1 }],
    toolRuns: [token],
    ...over,
  };
}

const rules = (e: Evidence) => checkInvariants(e).violations.map((v) => `${v.rule}: ${v.detail}`);

describe('invariant checker: every prompt answered once', () => {
  it('passes a prompt shown once, answered once, its tool run once, and counts it', () => {
    const { violations, tally } = checkInvariants(evidence());
    expect(violations).toEqual([]);
    expect(tally).toMatchObject({ sent: 1, answeredOnce: 1, prompts: 1, promptsAnsweredOnce: 1 });
  });

  it('reports a prompt message left with live buttons', () => {
    const live = evidence({
      botMessages: [[{ messageId: 1, text: '🔐 Bash: echo q-a-1 >> log', replyMarkup: KEYBOARD }]],
    });
    expect(rules(live)).toContain('prompt: prompt message 1 left with live buttons');
  });

  it('reports a prompt shown twice, a tool run twice, two results, a denial, and an unanswered press', () => {
    const twice = evidence({
      botMessages: [
        [
          { messageId: 1, text: '🔐 Bash: echo q-a-1 >> log' },
          { messageId: 2, text: '🔐 Bash: echo q-a-1 >> log' },
          { messageId: 3, text: answerTo('q-a-1') },
        ],
      ],
    });
    expect(rules(twice)).toEqual(['prompt: q-a-1: its prompt shown 2 times']);
    expect(rules(evidence({ toolRuns: ['q-a-1', 'q-a-1'] }))).toEqual(['prompt: q-a-1: Bash ran 2 times']);
    expect(rules(evidence({ requests: [request('q-a-1', [{}, {}])] }))).toEqual([
      "prompt: q-a-1: Bash got 2 results (0 errors) for the user's one answer",
    ]);
    expect(rules(evidence({ requests: [request('q-a-1', [{ is_error: true }])], toolRuns: [] }))).toEqual([
      "prompt: q-a-1: Bash got 1 results (1 errors) for the user's one answer; Bash ran 0 times",
    ]);
    expect(rules(evidence({ promptAnswers: [{ id: 'cb1', answers: 0 }] }))).toEqual([
      'prompt: callback cb1 answered 0 times',
    ]);
  });
});

describe('invariant checker: progress cards', () => {
  it('reports a card left working or waiting, and does not count a waiting card as a second prompt', () => {
    const card = (text: string) =>
      evidence({
        botMessages: [
          [
            { messageId: 1, text: `🔐 Bash: echo q-a-1 >> log\n✅ Allowed` },
            { messageId: 2, text },
            { messageId: 3, text: answerTo('q-a-1') },
          ],
        ],
      });
    expect(rules(card(`❓ Waiting for your answer · 19s\n“q-a-1”\n❓ Bash echo q-a-1 >> log`))).toEqual([
      'card: card 2 left open ("❓ Waiting for your answer · 19s")',
    ]);
    expect(rules(card('⚙️ Working · 1s\n“q-a-1”'))).toEqual(['card: card 2 left open ("⚙️ Working · 1s")']);
    expect(rules(card('✅ Done · 6s\n“q-a-1”\n▶ Bash: echo q-a-1 >> log'))).toEqual([]);
  });
});

describe('invariant checker: rich replies', () => {
  it('reads a rich message (its Markdown) as the answer, and a rich answer beside a classic one as doubled', () => {
    const rich = { messageId: 2, text: `**Done.** ${answerTo('q-a-1')}\n\n| a | b |\n|--|--|`, rich: true };
    expect(rules(evidence({ botMessages: [[{ messageId: 1, text: '🔐 Bash: q-a-1' }, rich]] }))).toEqual([]);
    const doubled = evidence({
      botMessages: [
        [{ messageId: 1, text: '🔐 Bash: q-a-1' }, rich, { messageId: 3, text: answerTo('q-a-1') }],
      ],
    });
    expect(rules(doubled)).toEqual(['answered-twice: answer to q-a-1 shown 2 times']);
  });
});
