import { describe, expect, it } from 'vitest';
import {
  draftStopParams,
  learnPart,
  type NewerPart,
  oneMemberNotice,
  type PartOutcome,
  refusalShowsLack,
  type ServerParts,
  sentEphemerally,
  spendButton,
  UNTRIED,
} from '../../src/core/telegram/newer-api.js';

const TEXT_BUTTONS =
  "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard";
const lacking = (part: NewerPart): ServerParts => ({ ...UNTRIED, [part]: 'no' });

describe('what a refusal says about a part', () => {
  it.each<[NewerPart, number, string, boolean]>([
    ['keep_on_stop', 404, 'Not Found: method not found', false],
    ['keep_on_stop', 400, 'Bad Request: unknown parameter keep_on_stop', true],
    ['keep_on_stop', 400, 'Bad Request: message is too long', false],
    ['disabled_buttons', 400, TEXT_BUTTONS, true],
    ['disabled_buttons', 400, 'Bad Request: BUTTON_DATA_INVALID', false],
    ['ephemeral', 400, "Bad Request: can't parse ephemeral_message_parameters JSON object", true],
    ['ephemeral', 400, 'Bad Request: chat not found', false],
    ['ephemeral', 400, 'Bad Request: not enough rights to send ephemeral messages', false],
    ['ephemeral', 403, 'Forbidden: bot was kicked from the group chat', false],
    ['ephemeral', 429, 'Too Many Requests: retry after 3', false],
  ])('%s, %i "%s" → lacks it: %s', (part, code, description, lacks) => {
    expect(refusalShowsLack(part, code, description)).toBe(lacks);
  });
});

describe('learning a part once per run', () => {
  it.each<[string, ServerParts, NewerPart, PartOutcome, Partial<ServerParts>, string]>([
    ['a success shows the part', UNTRIED, 'ephemeral', { kind: 'ok' }, { ephemeral: 'yes' }, 'none'],
    [
      'a refusal naming the part: the old way, for good',
      UNTRIED,
      'disabled_buttons',
      { kind: 'refused', code: 400, description: TEXT_BUTTONS },
      { disabled_buttons: 'no' },
      'old_way',
    ],
    [
      'a refusal of its own teaches nothing',
      UNTRIED,
      'ephemeral',
      { kind: 'refused', code: 400, description: 'Bad Request: chat not found' },
      { ephemeral: 'unknown' },
      'none',
    ],
    [
      'an ignored part: undo what went out, then the old way',
      { ...UNTRIED, ephemeral: 'yes' },
      'ephemeral',
      { kind: 'ignored' },
      { ephemeral: 'no' },
      'undo_then_old_way',
    ],
  ])('%s', (_name, before, part, outcome, after, followUp) => {
    const learnt = learnPart(before, part, outcome);
    expect(learnt.parts).toEqual({ ...before, ...after });
    expect(learnt.followUp).toBe(followUp);
  });

  it('returns the same knowledge when nothing changed', () => {
    const known = { ...UNTRIED, ephemeral: 'yes' as const };
    expect(learnPart(known, 'ephemeral', { kind: 'ok' }).parts).toBe(known);
  });
});

describe('keep_on_stop on drafts', () => {
  it.each<[string, ServerParts, object]>([
    ['asked for while untried', UNTRIED, { can_stop: true, keep_on_stop: true }],
    [
      'asked for once seen working',
      { ...UNTRIED, keep_on_stop: 'yes' },
      { can_stop: true, keep_on_stop: true },
    ],
    ['left out on a server without it', lacking('keep_on_stop'), { can_stop: true }],
  ])('%s', (_name, parts, params) => {
    expect(draftStopParams(parts)).toEqual(params);
  });
});

describe('a button that has done its job', () => {
  const keyboard = [
    [
      { text: '⏹ Stop 1', callback_data: 'ss:a' },
      { text: '♻️ Reset 1', callback_data: 'ss:b' },
    ],
    [{ text: '⏹ Stop 2', callback_data: 'ss:c' }],
  ];

  it('becomes a disabled button saying so, in place; the others stay pressable', () => {
    expect(spendButton(UNTRIED, keyboard, 'ss:a')).toEqual([
      [
        { text: '⏹ Stop 1 ✓', disabled: {} },
        { text: '♻️ Reset 1', callback_data: 'ss:b' },
      ],
      [{ text: '⏹ Stop 2', callback_data: 'ss:c' }],
    ]);
  });

  it.each<[string, ServerParts, string]>([
    [
      'on a server without disabled buttons (the keyboard stays as it was)',
      lacking('disabled_buttons'),
      'ss:a',
    ],
    ['when no button carries the data', UNTRIED, 'ss:zzz'],
  ])('is left alone %s', (_name, parts, data) => {
    expect(spendButton(parts, keyboard, data)).toBeUndefined();
  });
});

describe('a message for one member', () => {
  it.each<[string, ServerParts, Parameters<typeof oneMemberNotice>[1], 'public' | 'silent', object]>([
    [
      'a group refusal goes ephemerally',
      UNTRIED,
      { chatType: 'supergroup', receiverId: 7 },
      'silent',
      { kind: 'ephemeral', parameters: { receiver_user_id: 7 } },
    ],
    [
      'a press names its callback query',
      UNTRIED,
      { chatType: 'group', receiverId: 7, callbackQueryId: 'q1' },
      'public',
      { kind: 'ephemeral', parameters: { receiver_user_id: 7, callback_query_id: 'q1' } },
    ],
    [
      'a group refusal without ephemeral support is not said (the old way)',
      lacking('ephemeral'),
      { chatType: 'supergroup', receiverId: 7 },
      'silent',
      { kind: 'silent' },
    ],
    [
      'a command’s answer without ephemeral support is said to the group (the old way)',
      lacking('ephemeral'),
      { chatType: 'group', receiverId: 7 },
      'public',
      { kind: 'public' },
    ],
    [
      'a private chat is the member’s own',
      UNTRIED,
      { chatType: 'private', receiverId: 7 },
      'silent',
      { kind: 'public' },
    ],
    [
      'no known sender: the old way',
      UNTRIED,
      { chatType: 'group', receiverId: undefined },
      'public',
      { kind: 'public' },
    ],
  ])('%s', (_name, parts, target, fallback, notice) => {
    expect(oneMemberNotice(parts, target, fallback)).toEqual(notice);
  });

  it.each([
    ['the answer names the receiver', { receiver_user: { id: 7 } }, true],
    ['the server ignored the parameters (no receiver_user)', {}, false],
    ['another receiver', { receiver_user: { id: 8 } }, false],
  ])('went out ephemerally when %s', (_name, sent, ephemeral) => {
    expect(sentEphemerally(sent, 7)).toBe(ephemeral);
  });
});
