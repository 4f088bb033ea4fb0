import { ManualClock, type Route } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { createBudget, createDraftPacer } from '../src/core/telegram/send-pacing.js';
import { createReply, type ReplyOptions } from '../src/io/reply/reply.js';
import { createCourier } from '../src/io/telegram/courier.js';
import {
  botMessages,
  connectBridge,
  type FakeBridge,
  type Finally,
  framesOf,
  memoryLogger,
  sleep,
  startTurn,
  startWorld,
  type World,
  waitUntil,
} from './harness.js';

/** A 6,000-character answer with a table, a heading and a task list. */
function longAnswer(): string {
  const rows = Array.from({ length: 40 }, (_, i) => `| step ${i} | ${'ok'.padEnd(8, '.')} |`).join('\n');
  const prose = Array.from(
    { length: 30 },
    (_, i) => `Paragraph ${i}: ${'words that go on '.repeat(13)}`,
  ).join('\n\n');
  const text = `# Report\n\n| step | state |\n|:--|:--:|\n${rows}\n\n- [x] built\n- [ ] shipped\n\n${prose}`;
  return text.slice(0, 6000);
}

/** Sends `text` as deltas of `size` characters every `everyMs`, then the block and the turn's end. */
async function stream(
  bridge: FakeBridge,
  turnId: string,
  text: string,
  options: { size?: number; everyMs?: number; outcome?: 'success' | 'interrupted'; end?: boolean } = {},
): Promise<void> {
  const size = options.size ?? 400;
  for (let i = 0; i < text.length; i += size) {
    await bridge.send({ type: 'text_delta', turnId, blockId: 'b1', delta: text.slice(i, i + size) });
    await sleep(options.everyMs ?? 60);
  }
  if (options.end === false) return;
  await bridge.send({ type: 'text', turnId, blockId: 'b1', text });
  await bridge.send({ type: 'turn_ended', turnId, outcome: options.outcome ?? 'success' });
}

/**
 * A world with rich replies, a connected fake bridge, and the user's first message taken into a turn; closed
 * when the test that asked for them finishes.
 */
async function richTurn(
  finished: Finally,
  text = 'hello',
  route?: (world: World) => Route,
): Promise<{ world: World; bridge: FakeBridge; route: Route }> {
  const world = await startWorld({ replies: 'rich' }, {}, finished);
  const bridge = await connectBridge(world.socketPath, 'test', { finished });
  const r = route ? route(world) : { chatId: world.tg.privateChat().id };
  world.tg.sendText(r.chatId, text, r.threadId === undefined ? {} : { threadId: r.threadId });
  const frame = await waitUntil(() => framesOf(bridge, 'user_message')[0]);
  await startTurn(bridge, { turnId: 't1', route: r, inboundIds: [frame.inboundId] });
  return { world, bridge, route: r };
}

describe.concurrent('rich replies in a private chat', () => {
  it('streams drafts and persists a 6,000-character answer with a table as exactly one rich message', async ({
    onTestFinished,
  }) => {
    const { world, bridge, route } = await richTurn(onTestFinished);
    const { tg } = world;
    // "Thinking…" at once: an empty draft with a stop button, before the model has said anything.
    await tg.waitFor(() => tg.chat(route.chatId).drafts.find((d) => d.text === '' && d.canStop));
    const answer = longAnswer();
    expect(answer.length).toBe(6000);
    // 1.5 s of streaming: drafts go at most one per 600 ms, so two or three are seen.
    await stream(bridge, 't1', answer, { size: 600, everyMs: 150 });
    const [final] = await tg.waitFor(() => {
      const mine = botMessages(tg, route.chatId);
      return mine.length > 0 ? mine : undefined;
    });
    await sleep(300);
    expect(botMessages(tg, route.chatId)).toHaveLength(1);
    expect(final).toMatchObject({ rich: true });
    expect(final?.text.startsWith('# Report')).toBe(true);
    expect(final?.text.replace(/\\/g, '')).toContain(answer.slice(-200).replace(/\\/g, ''));
    expect(final?.html).toContain('<table>');
    expect(final?.history).toHaveLength(1);
    // Rich drafts were seen before the message, none after it.
    const drafts = tg.chat(route.chatId).drafts.filter((d) => d.rich);
    expect(drafts.length).toBeGreaterThanOrEqual(2);
    expect(drafts.every((d) => d.at < (final?.date ?? 0))).toBe(true);
    // No placeholder anywhere, no 429.
    expect(tg.messages(route.chatId).some((m) => m.text === '…')).toBe(false);
    expect(tg.stats().tooManyRequests).toBe(0);
  });

  it('a press of the stop button interrupts the turn, keeps the partial answer and starts nothing new', async ({
    onTestFinished,
  }) => {
    const { world, bridge, route } = await richTurn(onTestFinished);
    const { tg } = world;
    await stream(bridge, 't1', 'The first half of an answer', { end: false });
    await tg.waitFor(() => tg.chat(route.chatId).drafts.find((d) => d.rich && d.text.includes('first half')));
    tg.stopDraft(route.chatId);
    const interrupt = await waitUntil(() => framesOf(bridge, 'interrupt')[0]);
    expect(interrupt.route).toEqual(route);
    const draftsAtStop = tg.chat(route.chatId).drafts.length;
    // The model is interrupted after one more token; the drafts have stopped.
    await bridge.send({ type: 'text_delta', turnId: 't1', blockId: 'b1', delta: ' and more' });
    await sleep(800);
    expect(tg.chat(route.chatId).drafts.length).toBe(draftsAtStop);
    await bridge.send({
      type: 'text',
      turnId: 't1',
      blockId: 'b1',
      text: 'The first half of an answer and more',
    });
    await bridge.send({ type: 'turn_ended', turnId: 't1', outcome: 'interrupted' });
    const final = await tg.waitFor(() => botMessages(tg, route.chatId).find((m) => m.rich));
    expect(final.text).toContain('The first half of an answer and more');
    expect(final.text).toContain('Stopped');
    await sleep(300);
    // Nothing new: no further message went to the agent.
    expect(framesOf(bridge, 'user_message')).toHaveLength(1);
    expect(botMessages(tg, route.chatId).filter((m) => m.rich)).toHaveLength(1);
  });

  it('falls back to the HTML render when Telegram refuses the rich message, and logs why', async ({
    onTestFinished,
  }) => {
    const { world, bridge, route } = await richTurn(onTestFinished);
    const { tg } = world;
    tg.failNext('sendRichMessage', { description: "Bad Request: can't parse rich message: test refusal" });
    await stream(bridge, 't1', 'Some **bold** text');
    const final = await tg.waitFor(() => botMessages(tg, route.chatId)[0]);
    expect(final.rich).toBeUndefined();
    expect(final.html).toBe('Some <b>bold</b> text');
    expect(
      world.logger.lines.some(
        (l) => l.fields.event === 'rich_refused' && /test refusal/.test(String(l.fields.error)),
      ),
    ).toBe(true);
  });

  it('does not send a second message when the answer to sendRichMessage is lost', async ({
    onTestFinished,
  }) => {
    const { world, bridge, route } = await richTurn(onTestFinished);
    const { tg } = world;
    tg.dropNext('sendRichMessage');
    await stream(bridge, 't1', 'An answer whose send loses its reply');
    await tg.waitFor(() => botMessages(tg, route.chatId)[0]);
    await waitUntil(() => world.logger.lines.find((l) => l.fields.event === 'send_answer_lost'));
    await sleep(500);
    expect(botMessages(tg, route.chatId)).toHaveLength(1);
    expect(tg.calls('sendRichMessage')).toHaveLength(1);
    expect(world.logger.lines.find((l) => l.fields.event === 'send_answer_lost')?.fields).toMatchObject({
      outcome: 'found',
    });
  });

  it('uses the classic path for good once the server answers "method not found"', async ({
    onTestFinished,
  }) => {
    const { world, bridge, route } = await richTurn(onTestFinished);
    const { tg } = world;
    const missing = { errorCode: 404, description: 'Not Found: method not found' };
    tg.failNext('sendRichMessageDraft', missing, { times: 100 });
    tg.failNext('sendRichMessage', missing, { times: 100 });
    await stream(bridge, 't1', 'First **answer**');
    const first = await tg.waitFor(() => botMessages(tg, route.chatId)[0]);
    expect(first.html).toBe('First <b>answer</b>');
    // The next message takes the classic path: no "Thinking…" draft for it (and no placeholder either).
    const drafts = tg.calls('sendMessageDraft').length;
    const again = tg.sendText(route.chatId, 'again');
    await waitUntil(() => framesOf(bridge, 'user_message').find((f) => f.text === 'again'), 3000, 'stored');
    await sleep(300);
    expect(tg.calls('sendMessageDraft')).toHaveLength(drafts);
    expect(botMessages(tg, route.chatId).filter((m) => m.replyToMessageId === again.messageId)).toEqual([]);
    expect(world.logger.lines.filter((l) => l.fields.event === 'rich_missing')).toHaveLength(1);
  });
});

describe.concurrent('rich replies when the bridge was away', () => {
  it("a private chat's message stored while the bridge was away shows 👀, then one rich answer: nothing stranded", async ({
    onTestFinished,
  }) => {
    const world = await startWorld({ replies: 'rich' }, {}, onTestFinished);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    const asked = tg.sendText(chatId, 'are you there');
    await tg.waitFor(() => tg.message(chatId, asked.messageId)?.reactions.includes('👀') || undefined);
    expect(botMessages(tg, chatId)).toEqual([]);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const frame = await waitUntil(() => framesOf(bridge, 'user_message')[0]);
    await startTurn(bridge, { turnId: 't1', route: { chatId }, inboundIds: [frame.inboundId] });
    await stream(bridge, 't1', '| a | b |\n|--|--|\n| 1 | 2 |');
    const final = await tg.waitFor(() => botMessages(tg, chatId).find((m) => m.rich));
    expect(final.html).toContain('<table>');
    await tg.waitFor(() => tg.message(chatId, asked.messageId)?.reactions.includes('👌') || undefined);
    await sleep(300);
    expect(botMessages(tg, chatId)).toHaveLength(1);
    expect(tg.stats().tooManyRequests).toBe(0);
  });
});

describe.concurrent('rich replies in a group', () => {
  it('sends the answer’s first message with its first text, edits it into the rich answer, and shows no "…"', async ({
    onTestFinished,
  }) => {
    const { world, bridge, route } = await richTurn(onTestFinished, '@switchyard_sandbox_bot hello', (w) => ({
      chatId: w.tg.createGroup({ title: 'team', supergroup: true }).id,
    }));
    const { tg } = world;
    await sleep(200);
    expect(botMessages(tg, route.chatId)).toEqual([]);
    const answer = `## Table\n\n| a | b |\n|--|--|\n| 1 | 2 |\n\n${'More text here. '.repeat(30)}`;
    // Seven deltas 400 ms apart: the group's edit budget (scaled by ten) allows a live edit after each.
    const streaming = stream(bridge, 't1', answer, { size: 80, everyMs: 400 });
    const placeholder = await tg.waitFor(() => botMessages(tg, route.chatId)[0]);
    await streaming;
    const final = await tg.waitFor(
      () => {
        const m = tg.message(route.chatId, placeholder.messageId);
        return m?.rich && m.text === answer.trim() ? m : undefined;
      },
      { timeoutMs: 15_000 },
    );
    expect(final.html).toContain('<table>');
    // Live rich edits happened before the final one.
    expect(final.history.filter((v) => v.rich).length).toBeGreaterThanOrEqual(2);
    expect(botMessages(tg, route.chatId)).toHaveLength(1);
    expect(final.history.some((v) => v.text === '…')).toBe(false);
    expect(tg.stats().tooManyRequests).toBe(0);
  });
});

describe('draft pacing (manual clock)', () => {
  /** A draft-mode reply over a recording API and a clock the test moves. */
  function paced() {
    const clock = new ManualClock();
    const drafts: { at: number; text: string }[] = [];
    const record = async (text: string): Promise<true> => {
      drafts.push({ at: clock.now(), text });
      return true;
    };
    const api = {
      sendMessageDraft: (_c: number, _d: number, text: string) => record(text),
      sendRichMessageDraft: (_c: number, _d: number, rich: { markdown?: string }) =>
        record(rich.markdown ?? ''),
    } as unknown as ReplyOptions['api'];
    const reply = createReply({
      mode: 'draft',
      api,
      journal: {} as ReplyOptions['journal'],
      courier: createCourier(createBudget(), clock),
      clock,
      pacer: createDraftPacer(),
      route: { chatId: 1 },
      key: 't',
      draftId: 9,
      messageIds: [],
      onMessages: () => {},
      rich: () => true,
      onMissing: () => {},
      logger: memoryLogger(),
    });
    return { reply, drafts, advance: (ms: number) => clock.advanceAsync(ms) };
  }

  it('shows the first words at once, then at most one draft per 600 ms', async () => {
    const { reply, drafts, advance } = paced();
    let text = '';
    reply.show(() => text);
    text = 'Hello';
    reply.show(() => text);
    await advance(0);
    expect(drafts.map((d) => d.at)).toEqual([0]);
    for (let i = 0; i < 30; i++) {
      text += ' more';
      reply.show(() => text);
      await advance(100);
    }
    const gaps = drafts.slice(1).map((d, i) => d.at - (drafts[i]?.at ?? 0));
    expect(gaps.every((g) => g >= 600)).toBe(true);
    expect(drafts.length).toBeGreaterThanOrEqual(5);
  });

  it('refreshes an unchanged draft before its 30-second lifetime ends (a long tool phase)', async () => {
    const { reply, drafts, advance } = paced();
    reply.thinking();
    await advance(0);
    await advance(65_000);
    expect(drafts.map((d) => d.at)).toEqual([0, 20_000, 40_000, 60_000]);
    expect(drafts.every((d) => d.text === '')).toBe(true);
  });
});
