import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FrameOf } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { openGatewayStore } from '../src/store.js';

const frame = (n: number): FrameOf<'user_message'> => ({
  type: 'user_message',
  inboundId: `tg:1:${n}`,
  route: { chatId: 1 },
  telegramMessageId: n,
  sender: { id: 1, name: 'u' },
  text: `m${n}`,
  attachments: [],
  sentAt: 0,
});

describe('store', () => {
  it('keeps inbox rows until the bridge acknowledges their frames, across reopen', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'gws-')), 'g.sqlite');
    let s = openGatewayStore(path);
    s.recordUpdates([{ updateId: 10, payload: { update_id: 10 } }]);
    s.addInbound({ inboundId: 'tg:1:1', frame: frame(1), updateId: 10 });
    s.addInbound({ inboundId: 'tg:1:2', frame: frame(2) });
    expect(s.isHandled(10)).toBe(true);
    expect(s.queuedInbound().map((r) => r.inboundId)).toEqual(['tg:1:1', 'tg:1:2']);
    expect(s.channel.append(frame(1))).toBe(1);
    const streamId = s.channel.streamId;
    s.close();

    s = openGatewayStore(path);
    expect(s.channel.streamId).toBe(streamId);
    expect(s.queuedInbound().map((r) => r.inboundId)).toEqual(['tg:1:2']);
    expect(s.channel.append(frame(2))).toBe(2);
    expect(s.inboxLength()).toBe(2);
    s.channel.acknowledge(1);
    expect(s.inboxLength()).toBe(1);
    expect(s.channel.pendingAfter(0).map((p) => p.seq)).toEqual([2]);
    expect(s.nextUpdateOffset()).toBe(11);
    s.close();
  });

  it('drops duplicate updates by update_id and answers a prompt once', () => {
    const s = openGatewayStore(':memory:');
    expect(
      s.recordUpdates([
        { updateId: 1, payload: {} },
        { updateId: 2, payload: undefined },
      ]),
    ).toEqual([1, 2]);
    expect(
      s.recordUpdates([
        { updateId: 2, payload: {} },
        { updateId: 3, payload: {} },
      ]),
    ).toEqual([3]);
    const p = s.addPrompt({ requestId: 'r', kind: 'permission', route: { chatId: 1 }, payload: {} });
    expect(p.token).toMatch(/^[0-9a-f]{16}$/);
    expect(s.closePrompt(p.token, 'answered')).toBe(true);
    expect(s.closePrompt(p.token, 'answered')).toBe(false);
    s.close();
  });
});
