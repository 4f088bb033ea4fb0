/**
 * Files the agent sends are replies to the message that opened their turn, in every reply mode. The
 * file row looked that message up through its placeholder, which a rich private turn (a draft, no
 * placeholder) never has: the file arrived as a loose message (issue 31). Now the opening message is
 * recorded when the turn starts, whatever its reply looks like.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { botMessages, connectBridge, framesOf, startTurn, startWorld, waitUntil } from './harness.js';

describe('files the agent sends', () => {
  it.each(['rich', 'classic'] as const)(
    'reply to the opening message in a private chat (%s replies)',
    async (replies) => {
      const world = await startWorld({ replies });
      const bridge = await connectBridge(world.socketPath);
      const { tg } = world;
      const chatId = tg.privateChat().id;
      const asked = tg.sendText(chatId, 'send me the report');
      const frame = await waitUntil(() => framesOf(bridge, 'user_message')[0]);
      await startTurn(bridge, { turnId: 't1', route: { chatId }, inboundIds: [frame.inboundId] });
      const dir = join(world.stateDir, 'files');
      mkdirSync(dir, { recursive: true });
      const path = join(dir, 'report.txt');
      writeFileSync(path, 'numbers');
      await bridge.send({
        type: 'file_send',
        fileId: 'f1',
        turnId: 't1',
        route: { chatId },
        files: [{ path, name: 'report.txt', kind: 'document', size: 7 }],
        caption: 'The report',
      });
      const doc = await tg.waitFor(() => botMessages(tg, chatId).find((m) => m.kind === 'document'));
      expect(doc.replyToMessageId).toBe(asked.messageId);
    },
  );
});
