import { describe, expect, it } from 'vitest';
import {
  type ButtonPress,
  decidePress,
  decideTypedAnswer,
  isComplete,
  type PromptState,
} from '../../src/core/prompts/prompt-press.js';

const question = {
  type: 'question',
  requestId: 'q1',
  route: { chatId: 7 },
  questions: [
    { question: 'Colour?', header: 'c', multiSelect: false, options: [{ label: 'Red' }, { label: 'Blue' }] },
    { question: 'Pets?', header: 'p', multiSelect: true, options: [{ label: 'Cat' }, { label: 'Dog' }] },
  ],
};
const permission = { type: 'permission_request', requestId: 'p1', route: { chatId: 7 } };

const prompt = (over: Partial<PromptState> = {}): PromptState => ({
  token: 't',
  requestId: 'q1',
  kind: 'question',
  route: { chatId: 7 },
  messageId: 50,
  payload: question,
  selection: {},
  answers: {},
  state: 'open',
  ...over,
});
const onPrompt = { message_id: 50, chat: { id: 7 } };
const option = (q: number, o: number): ButtonPress => ({
  kind: 'option',
  token: 't',
  question: q,
  option: o,
});
const done = (q: number): ButtonPress => ({ kind: 'done', token: 't', question: q });
const allow = (decision: 'allow' | 'allow_always' | 'deny', suggestion?: number): ButtonPress => ({
  kind: 'permission',
  token: 't',
  decision,
  ...(suggestion === undefined ? {} : { suggestion }),
});
const permissionPrompt = prompt({ kind: 'permission', requestId: 'p1', payload: permission });
const choices = { always: [0, 1], separate: [2] };

describe('prompt press decisions', () => {
  it.each([
    ['an undecodable press', undefined, undefined, onPrompt, { kind: 'expired', clearKeyboard: true }],
    [
      'a press on a prompt the store forgot',
      option(0, 0),
      undefined,
      onPrompt,
      { kind: 'expired', clearKeyboard: true },
    ],
    [
      'a second press after the answer (a double press)',
      option(0, 0),
      prompt({ state: 'answered' }),
      onPrompt,
      { kind: 'expired', clearKeyboard: true },
    ],
    [
      'a press on a closed (expired) prompt',
      option(0, 0),
      prompt({ state: 'closed' }),
      onPrompt,
      { kind: 'expired', clearKeyboard: true },
    ],
    ['from another chat', option(0, 0), prompt(), { message_id: 50, chat: { id: 8 } }, { kind: 'elsewhere' }],
    [
      'from another message of the chat',
      option(0, 0),
      prompt(),
      { message_id: 51, chat: { id: 7 } },
      { kind: 'elsewhere' },
    ],
    [
      'from a forum topic when the prompt is outside topics',
      option(0, 0),
      prompt(),
      { message_id: 50, chat: { id: 7 }, message_thread_id: 3, is_topic_message: true },
      { kind: 'elsewhere' },
    ],
    ['with no message at all', option(0, 0), prompt(), undefined, { kind: 'elsewhere' }],
    [
      'a single-choice option answers its question',
      option(0, 1),
      prompt(),
      onPrompt,
      { kind: 'answer', selection: {}, collected: { 'Colour?': 'Blue' } },
    ],
    [
      'an option the question does not have',
      option(0, 5),
      prompt(),
      onPrompt,
      { kind: 'expired', clearKeyboard: false },
    ],
    [
      'a question the prompt does not have',
      option(4, 0),
      prompt(),
      onPrompt,
      { kind: 'expired', clearKeyboard: false },
    ],
    [
      'a question answered already (a stale keyboard)',
      option(0, 0),
      prompt({ answers: { 'Colour?': 'Red' } }),
      onPrompt,
      { kind: 'already_answered' },
    ],
    [
      'a multi-select option toggles on',
      option(1, 1),
      prompt(),
      onPrompt,
      { kind: 'toggle', selection: { 1: [1] } },
    ],
    [
      'and off again',
      option(1, 1),
      prompt({ selection: { 1: [0, 1] } }),
      onPrompt,
      { kind: 'toggle', selection: { 1: [0] } },
    ],
    [
      'done on a multi-select answers with the chosen labels',
      done(1),
      prompt({ selection: { 1: [0, 1] } }),
      onPrompt,
      { kind: 'answer', selection: { 1: [0, 1] }, collected: { 'Pets?': 'Cat, Dog' } },
    ],
    [
      'done on a single-choice question is forged',
      done(0),
      prompt(),
      onPrompt,
      { kind: 'expired', clearKeyboard: false },
    ],
    [
      'a permission press on a question prompt',
      allow('allow'),
      prompt(),
      onPrompt,
      { kind: 'expired', clearKeyboard: false },
    ],
  ])('%s', (_what, press, row, message, decision) => {
    expect(decidePress({ press, row, message })).toEqual(decision);
  });

  it.each([
    ['allow', allow('allow'), { decision: 'allow' }, 'Allowed'],
    ['deny', allow('deny'), { decision: 'deny', message: 'The user denied this.' }, 'Denied'],
    [
      'always allow: every rule the one button showed',
      allow('allow_always'),
      { decision: 'allow_always', suggestions: [0, 1] },
      'Allowed',
    ],
    [
      'a separate choice, as shown',
      allow('allow_always', 2),
      { decision: 'allow_always', suggestions: [2] },
      'Allowed',
    ],
  ])('permission: %s', (_what, press, answer, ack) => {
    expect(decidePress({ press, row: permissionPrompt, message: onPrompt, choices })).toEqual({
      kind: 'permission',
      answer: { type: 'permission_answer', requestId: 'p1', ...answer },
      ack,
    });
  });

  it('permission: a choice the prompt did not show applies nothing and expires', () => {
    expect(
      decidePress({ press: allow('allow_always', 1), row: permissionPrompt, message: onPrompt, choices }),
    ).toEqual({
      kind: 'expired',
      clearKeyboard: false,
    });
    expect(
      decidePress({
        press: allow('allow_always'),
        row: permissionPrompt,
        message: onPrompt,
        choices: { always: [], separate: [] },
      }),
    ).toEqual({ kind: 'expired', clearKeyboard: false });
  });

  it('typed answers fill the first open question; a prompt is complete when every question has one', () => {
    expect(decideTypedAnswer([], 'hi')).toBeUndefined();
    expect(decideTypedAnswer([permissionPrompt], 'hi')).toBeUndefined();
    const first = decideTypedAnswer([permissionPrompt, prompt()], 'Green');
    expect(first?.collected).toEqual({ 'Colour?': 'Green' });
    expect(isComplete(question as never, first?.collected ?? {})).toBe(false);
    const second = decideTypedAnswer([prompt({ answers: { 'Colour?': 'Green' } })], 'Fish');
    expect(second?.collected).toEqual({ 'Colour?': 'Green', 'Pets?': 'Fish' });
    expect(isComplete(question as never, second?.collected ?? {})).toBe(true);
    expect(decideTypedAnswer([prompt({ answers: second?.collected ?? {} })], 'more')).toBeUndefined();
  });
});
