/**
 * What a permission press may do: it counts only on its prompt's own message (a press carrying the
 * prompt's token from another chat or message is refused, since clients choose `callback_data`), and
 * "always allow" applies exactly the rules its text listed, while a mode change or an added directory is
 * applied only by its own button.
 */
import type { FrameOf } from '@switchyard/protocol';
import type { SandboxMessage, TelegramServer } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { ELSEWHERE } from '../src/io/prompts/prompts.js';
import { botMessage, connectBridge, framesOf, introduce, sleep, startWorld, waitUntil } from './harness.js';

function permission(
  chatId: number,
  requestId: string,
  suggestions: FrameOf<'permission_request'>['suggestions'] = [],
  threadId?: number,
): FrameOf<'permission_request'> {
  return {
    type: 'permission_request',
    requestId,
    route: threadId === undefined ? { chatId } : { chatId, threadId },
    toolName: 'Bash',
    summary: `make ${requestId}`,
    input: { command: `make ${requestId}` },
    suggestions,
  };
}

const buttons = (m: SandboxMessage | undefined) =>
  (m?.replyMarkup?.inline_keyboard ?? []).map((row) =>
    row.map((b) => ({ text: b.text, data: b.callback_data ?? '' })),
  );

async function press(tg: TelegramServer, chatId: number, messageId: number, data: string) {
  const q = tg.pressButton(chatId, messageId, data, { force: true });
  return (await tg.waitFor(() => tg.callbackQuery(q.id)?.answer)).text;
}

describe('permission presses', () => {
  it('refuses a press carrying a prompt’s token from another chat, topic or message', async () => {
    const world = await startWorld();
    const b = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    const group = tg.createGroup({ title: 'team', supergroup: true });
    const forum = tg.createGroup({ title: 'forum', supergroup: true, forum: true, topics: ['a', 'b'] });
    const [topicA, topicB] = forum.topics;
    if (!topicA || !topicB) throw new Error('no topics');
    await introduce(world, b, group.id);
    await introduce(world, b, forum.id);

    await b.send(permission(chatId, 'private'));
    await b.send(permission(group.id, 'group'));
    await b.send(permission(forum.id, 'topic-a', [], topicA.threadId));
    await b.send(permission(forum.id, 'topic-b', [], topicB.threadId));
    const mine = await botMessage(tg, chatId, (t) => t.includes('make private'));
    const other = await botMessage(tg, group.id, (t) => t.includes('make group'));
    const inA = await botMessage(tg, forum.id, (t) => t.includes('make topic-a'));
    const inB = await botMessage(tg, forum.id, (t) => t.includes('make topic-b'));
    tg.sendText(chatId, 'a message of mine');
    const allow = (m: SandboxMessage) => buttons(m)[0]?.[0]?.data ?? '';

    // The private prompt's Allow, pressed on the group's prompt message: same user, allowed, wrong chat.
    expect(await press(tg, group.id, other.messageId, allow(mine))).toBe(ELSEWHERE);
    // Topic A's Allow, pressed in topic B of the same forum.
    expect(await press(tg, forum.id, inB.messageId, allow(inA))).toBe(ELSEWHERE);
    // The right chat, but another message of it.
    const second = await botMessage(tg, chatId, (t) => t.includes('make private'));
    await b.send(permission(chatId, 'private-2'));
    const otherPrompt = await botMessage(tg, chatId, (t) => t.includes('make private-2'));
    expect(await press(tg, chatId, otherPrompt.messageId, allow(second))).toBe(ELSEWHERE);
    await sleep(200);
    expect(framesOf(b, 'permission_answer')).toEqual([]);

    // On its own message, the same press counts.
    expect(await press(tg, chatId, mine.messageId, allow(mine))).toBe('Allowed');
    expect(await press(tg, forum.id, inA.messageId, allow(inA))).toBe('Allowed');
    await waitUntil(() => framesOf(b, 'permission_answer').length === 2);
    expect(framesOf(b, 'permission_answer').map((f) => f.requestId)).toEqual(['private', 'topic-a']);
  });

  it('lists every rule "always allow" adds, and offers a mode change and a directory on their own buttons, saying in words where each applies', async () => {
    const world = await startWorld();
    const b = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    const suggestions: FrameOf<'permission_request'>['suggestions'] = [
      { kind: 'addRules', label: 'allow Bash(make:*)', where: 'this conversation' },
      { kind: 'setMode', label: 'allow all edits from now on', where: 'this conversation' },
      { kind: 'addRules', label: 'allow Read(//etc/**)', where: 'this conversation' },
      {
        kind: 'addDirectories',
        label: 'allow access to /etc/a/rather/long/directory/name/for/one/button',
        where: 'this conversation',
      },
    ];
    await b.send(permission(chatId, 'r1', suggestions));
    await b.send(permission(chatId, 'r2', suggestions));
    const m1 = await botMessage(tg, chatId, (t) => t.includes('make r1'));
    const m2 = await botMessage(tg, chatId, (t) => t.includes('make r2'));

    expect(m1.text).toMatch(/^🔐 Claude wants to make r1\n/);
    expect(m1.text).toContain(
      'Always allow adds:\n• allow Bash(make:*) (this conversation)\n• allow Read(//etc/**) (this conversation)',
    );
    // A choice too long for a button is spelled out in the text, numbered.
    expect(m1.text).toContain(
      '(1) allow access to /etc/a/rather/long/directory/name/for/one/button (this conversation)',
    );
    expect(m1.text).not.toContain('edits from now on (this conversation)\n');
    const rows = buttons(m1);
    expect(rows.map((row) => row.map((x) => x.text))).toEqual([
      ['✅ Allow', '⛔ Deny'],
      ['♾ Always allow (this conversation)'],
      ['✅ Allow, and allow all edits from now on (this conversation)'],
      ['✅ Allow, and (1) above'],
    ]);
    for (const x of rows.flat()) expect(Buffer.byteLength(x.data)).toBeLessThan(64);

    expect(await press(tg, chatId, m1.messageId, rows[1]?.[0]?.data ?? '')).toBe('Allowed');
    expect(await press(tg, chatId, m2.messageId, buttons(m2)[2]?.[0]?.data ?? '')).toBe('Allowed');
    await waitUntil(() => framesOf(b, 'permission_answer').length === 2);
    expect(
      framesOf(b, 'permission_answer').map(({ requestId, decision, suggestions: s }) => ({
        requestId,
        decision,
        s,
      })),
    ).toEqual([
      { requestId: 'r1', decision: 'allow_always', s: [0, 2] },
      { requestId: 'r2', decision: 'allow_always', s: [1] },
    ]);
    await tg.waitFor(() =>
      tg
        .message(chatId, m2.messageId)
        ?.text.includes('✅ Allowed, and allow all edits from now on (this conversation)'),
    );
  });

  it('a rule that reaches every conversation in the directory says so on its button', async () => {
    const world = await startWorld();
    const b = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    await b.send(
      permission(chatId, 'r1', [
        { kind: 'addRules', label: 'allow Bash(make:*)', where: 'every conversation in /srv/app' },
      ]),
    );
    const m = await botMessage(tg, chatId, (t) => t.includes('make r1'));
    expect(buttons(m).map((row) => row.map((x) => x.text))).toEqual([
      ['✅ Allow', '⛔ Deny'],
      ['♾ Always allow (every conversation in /srv/app)'],
    ]);
  });

  it('offers no "always allow" it cannot list in full', async () => {
    const world = await startWorld();
    const b = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    const long = Array.from({ length: 10 }, (_, i) => ({
      kind: 'addRules' as const,
      label: `allow Bash(${String(i).repeat(400)})`,
    }));
    await b.send(permission(chatId, 'r1', long));
    const m = await botMessage(tg, chatId, (t) => t.includes('make r1'));
    expect(buttons(m).map((row) => row.map((x) => x.text))).toEqual([['✅ Allow', '⛔ Deny']]);
    // A forged "always" press on it is not taken as one.
    const forged = (buttons(m)[0]?.[0]?.data ?? '').replace(/:a$/, ':A');
    expect(await press(tg, chatId, m.messageId, forged)).toBe('This request has expired.');
  });
});
