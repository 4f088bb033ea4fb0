/**
 * The agent's files to a gateway on another host (`io/mcp/file-carrier.ts`): each file crosses before
 * its `file_send`, which goes with the gateway's paths and the same `fileId`; a file the gateway refused
 * settles the call as not sent; a transfer cut by stopping emits nothing (the outbox resends at start).
 */
import type { FrameOf, PutOutcome } from '@switchyard/protocol';
import { silentLogger } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { createFileCarrier } from '../src/io/mcp/file-carrier.js';

const send = (fileId: string, paths: string[]): FrameOf<'file_send'> => ({
  type: 'file_send',
  fileId,
  route: { chatId: 1 },
  files: paths.map((path, i) => ({ path, name: `f${i}.txt`, kind: 'document', size: 1 })),
});
const settled = (outcomes: PutOutcome[]) => {
  let i = 0;
  return {
    names: [] as string[],
    put(_source: string, name: string): Promise<PutOutcome> {
      this.names.push(name);
      return Promise.resolve(outcomes[i++] ?? { ok: false, error: 'no more' });
    },
  };
};
const until = async (check: () => boolean) => {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 1));
};

describe('files the agent sends to a remote gateway', () => {
  it('emits the file_send once every file crossed, with the gateway’s paths and the same id', async () => {
    const emitted: FrameOf<'file_send'>[] = [];
    const transfers = settled([
      { ok: true, path: '/gw/files/out-1-0' },
      { ok: true, path: '/gw/files/out-1-1' },
    ]);
    const emit = createFileCarrier({
      transfers,
      emit: (f) => emitted.push(f),
      settle: () => expect.unreachable(),
      log: silentLogger,
    });
    emit(send('k1', ['/worker/files/out-1-0', '/worker/files/out-1-1']));
    await until(() => emitted.length > 0);
    expect(transfers.names).toEqual(['out-1-0', 'out-1-1']);
    expect(emitted).toEqual([{ ...send('k1', ['/gw/files/out-1-0', '/gw/files/out-1-1']) }]);
  });

  it('settles the call as not sent when the gateway refused a file, and emits nothing', async () => {
    const emitted: unknown[] = [];
    const answers: FrameOf<'file_sent'>[] = [];
    const emit = createFileCarrier({
      transfers: settled([{ ok: false, error: 'over the limit' }]),
      emit: (f) => emitted.push(f),
      settle: (f) => answers.push(f),
      log: silentLogger,
    });
    emit(send('k2', ['/worker/files/out-2-0']));
    await until(() => answers.length > 0);
    expect(answers).toEqual([{ type: 'file_sent', fileId: 'k2', ok: false, error: 'over the limit' }]);
    expect(emitted).toEqual([]);
  });

  it('emits nothing for a transfer cut by stopping: the entry is resent at the next start', async () => {
    const emitted: unknown[] = [];
    const emit = createFileCarrier({
      transfers: settled([
        { ok: false, error: 'stopping', stopped: true },
        { ok: true, path: '/gw/files/x' },
      ]),
      emit: (f) => emitted.push(f),
      settle: () => expect.unreachable(),
      log: silentLogger,
    });
    emit(send('k3', ['/worker/files/out-3-0']));
    emit(send('k4', ['/worker/files/out-4-0']));
    await until(() => emitted.length > 0);
    // The next send still goes: one cut transfer does not stop the queue.
    expect(emitted).toEqual([send('k4', ['/gw/files/x'])]);
  });
});
