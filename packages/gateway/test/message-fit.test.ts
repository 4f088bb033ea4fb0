/**
 * A user's message never wedges in the inbox: what the client chose (a MIME type, a file name, quoted
 * text) is cut to the protocol's limits at intake, and a stored message the channel still refuses is
 * marked unread, its sender told, and not offered again at the next boot.
 */
import { join } from 'node:path';
import { type FrameOf, frameProblem, USER_MESSAGE_LIMITS } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { fit, fitUserMessage } from '../src/core/intake/message-fit.js';
import { openGatewayStore } from '../src/store/store.js';
import { botMessage, botMessages, connectBridge, framesOf, sleep, startWorld, waitUntil } from './harness.js';

const frame = (extra: Partial<FrameOf<'user_message'>> = {}): FrameOf<'user_message'> => ({
  type: 'user_message',
  inboundId: 'ib-1',
  route: { chatId: 7 },
  telegramMessageId: 3,
  sender: { id: 7, name: 'Ann' },
  text: 'see attached',
  attachments: [],
  sentAt: 0,
  ...extra,
});

describe('client-supplied fields at intake', () => {
  it('are cut to the schema limits, so the frame validates', () => {
    const over = frame({
      sender: { id: 7, name: 'A'.repeat(400), username: 'u'.repeat(150) },
      attachments: [
        { kind: 'document', path: '/x/in-1.bin', name: 'n'.repeat(900), mime: `text/${'x'.repeat(400)}` },
      ],
      replyTo: { messageId: 1, text: 'q'.repeat(5000), author: 'third_party' },
      forwardedFrom: { name: 'F'.repeat(400), author: 'third_party' },
    });
    expect(frameProblem(over)).toBeDefined();
    const fitted = fitUserMessage(over);
    expect(frameProblem(fitted)).toBeUndefined();
    expect(fitted.attachments[0]?.mime).toHaveLength(USER_MESSAGE_LIMITS.mime);
    expect(fitted.attachments[0]?.name).toHaveLength(USER_MESSAGE_LIMITS.fileName);
    expect(fitted.sender.name).toHaveLength(USER_MESSAGE_LIMITS.senderName);
    expect(fitted.replyTo?.text).toHaveLength(USER_MESSAGE_LIMITS.quote);
    expect(fitted.forwardedFrom?.name).toHaveLength(USER_MESSAGE_LIMITS.forwardName);
    expect(fitUserMessage(frame())).toEqual(frame());
  });

  it('are never cut inside a surrogate pair', () => {
    const emoji = '😀'; // two UTF-16 units
    expect(fit(`ab${emoji}`, 3)).toBe('ab');
    expect(fit(`ab${emoji}`, 4)).toBe(`ab${emoji}`);
  });

  it('a document with a 300-character MIME type reaches the agent, its type cut to 200', async () => {
    const world = await startWorld();
    const bridge = await connectBridge(world.socketPath);
    const chatId = world.tg.privateChat().id;
    world.tg.sendDocument(chatId, {
      data: Buffer.from('x'),
      fileName: 'odd.bin',
      mimeType: `application/${'x'.repeat(288)}`,
    });
    await waitUntil(() => framesOf(bridge, 'user_message').length === 1);
    expect(framesOf(bridge, 'user_message')[0]?.attachments[0]?.mime).toHaveLength(200);
  });
});

describe('a stored message the channel refuses', () => {
  it('is marked unread, its sender told once, and not offered again at the next boot', async () => {
    const world = await startWorld();
    const chatId = world.tg.privateChat().id;
    await world.gateway.stop();
    // What an earlier gateway stored before intake cut fields: a frame that can never validate.
    const store = openGatewayStore(join(world.stateDir, 'gateway.sqlite'));
    store.addInbound({
      inboundId: 'ib-wedged',
      frame: frame({
        inboundId: 'ib-wedged',
        route: { chatId },
        attachments: [{ kind: 'document', path: '/x/in-1.bin', mime: 'y'.repeat(300) }],
      }),
    });
    store.close();
    await world.restart();
    const told = await botMessage(world.tg, chatId, (t) => t.includes('cannot be passed to the agent'));
    expect(told.text).toContain('mime');
    await waitUntil(() => {
      const s = openGatewayStore(join(world.stateDir, 'gateway.sqlite'));
      try {
        return s.getInbound('ib-wedged')?.state === 'unread' || undefined;
      } finally {
        s.close();
      }
    });
    await world.restart();
    await connectBridge(world.socketPath);
    await sleep(500);
    expect(botMessages(world.tg, chatId).filter((m) => m.text.includes('cannot be passed'))).toHaveLength(1);
  });
});
