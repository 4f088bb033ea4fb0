/**
 * Attachments to a bridge on another host (`io/bridge/file-carrier.ts`): a message enters the channel
 * only once its files are on the worker, with the worker's paths; messages keep their order while one
 * waits for its files; a file the worker refuses is the message's refusal (a `ProtocolError`, told to
 * its sender), a transfer cut by stopping is not (the row stays queued for the next start).
 */
import { type FrameOf, ProtocolError, type PutOutcome } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { createFileCarrier } from '../src/io/bridge/file-carrier.js';

const message = (id: string, paths: string[] = []): FrameOf<'user_message'> => ({
  type: 'user_message',
  inboundId: id,
  route: { chatId: 1 },
  telegramMessageId: 1,
  sender: { id: 1, name: 'Ann' },
  text: id,
  attachments: paths.map((path) => ({ kind: 'document', path, name: 'plan.txt', size: 3 })),
  sentAt: 0,
});

/** A transfer peer whose puts the test settles by hand. */
function fakeTransfers() {
  const puts: Array<{ source: string; name: string; settle(outcome: PutOutcome): void }> = [];
  return {
    puts,
    put: (source: string, name: string) =>
      new Promise<PutOutcome>((settle) => {
        puts.push({ source, name, settle });
      }),
  };
}
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('attachments to a remote bridge', () => {
  it('sends a message only once its files are on the worker, with the worker’s paths, in order', async () => {
    const sent: FrameOf<'user_message'>[] = [];
    const transfers = fakeTransfers();
    const carry = createFileCarrier({
      send: async (f) => void sent.push(f as FrameOf<'user_message'>),
      transfers,
    });
    const first = carry(message('a', ['/gw/files/in-1-x.txt']));
    const second = carry(message('b'));
    await tick();
    // The plain message waits behind the one whose file is crossing.
    expect(sent).toEqual([]);
    expect(transfers.puts.map((p) => [p.source, p.name])).toEqual([['/gw/files/in-1-x.txt', 'in-1-x.txt']]);
    transfers.puts[0]?.settle({ ok: true, path: '/worker/files/in-1-x.txt' });
    await first;
    await second;
    expect(sent.map((f) => [f.inboundId, f.attachments.map((a) => a.path)])).toEqual([
      ['a', ['/worker/files/in-1-x.txt']],
      ['b', []],
    ]);
    expect(sent[0]?.attachments[0]).toMatchObject({ name: 'plan.txt', size: 3, kind: 'document' });
  });

  it('refuses a message whose file the worker refused, and goes on with the next', async () => {
    const sent: string[] = [];
    const transfers = fakeTransfers();
    const carry = createFileCarrier({
      send: async (f) => void sent.push((f as FrameOf<'user_message'>).inboundId),
      transfers,
    });
    const refused = carry(message('a', ['/gw/files/in-2.bin']));
    const next = carry(message('b'));
    await tick();
    transfers.puts[0]?.settle({ ok: false, error: 'over the limit' });
    await expect(refused).rejects.toBeInstanceOf(ProtocolError);
    await expect(refused).rejects.toThrow(/plan.txt did not reach the agent's host: over the limit/);
    await next;
    expect(sent).toEqual(['b']);
  });

  it('leaves a message cut by stopping queued: not a refusal its sender is told of', async () => {
    const transfers = fakeTransfers();
    const carry = createFileCarrier({ send: async () => {}, transfers });
    const cut = carry(message('a', ['/gw/files/in-3.bin']));
    await tick();
    transfers.puts[0]?.settle({ ok: false, error: 'the service is stopping', stopped: true });
    const error = await cut.catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ProtocolError);
  });

  it('passes messages straight through to a local bridge, paths unchanged', async () => {
    const sent: FrameOf<'user_message'>[] = [];
    const carry = createFileCarrier({ send: async (f) => void sent.push(f as FrameOf<'user_message'>) });
    const frame = message('a', ['/shared/files/in-4.txt']);
    await carry(frame);
    expect(sent).toEqual([frame]);
  });
});
