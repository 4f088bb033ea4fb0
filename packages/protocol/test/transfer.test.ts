/**
 * Files over the protocol (`node/transfer.ts`) between two real endpoints on a Unix socket: the file
 * arrives whole and checksummed; a link cut between two chunks, or a receiver or a sender that dies between
 * two chunks and starts again, resumes from the bytes already on the receiver's disk, never sends one
 * twice, and ends with one verdict; other frames go between the chunks of a transfer.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/common/logger.js';
import type { AppFrame, TransferFrame } from '../src/common/messages/frame.js';
import { createProtocolClient } from '../src/node/client.js';
import type { Endpoint } from '../src/node/endpoint.js';
import { createMemoryChannelStore } from '../src/node/memory-store.js';
import { createProtocolServer } from '../src/node/server.js';
import { createTransferPeer, type TransferPeer } from '../src/node/transfer.js';
import { startCuttingProxy, tempSocketDir, waitFor } from './harness.js';

const isTransfer = (frame: AppFrame): frame is TransferFrame => frame.type.startsWith('transfer_');
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const LIMITS = { chunkBytes: 1024, windowChunks: 2, stallMs: 2_000 };

describe('files over the protocol', () => {
  let dir: ReturnType<typeof tempSocketDir>;
  const stops: Array<() => Promise<void> | void> = [];
  beforeEach(() => {
    dir = tempSocketDir();
  });
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
    dir.remove();
  });

  /**
   * The receiving side (the gateway's socket, an exchange directory of its own), started anew on the
   * same disk by each call; `onChunk` sees each chunk after it is handled.
   */
  async function receiver(
    onChunk: (offset: number) => void = () => {},
    onOther: (frame: AppFrame) => void = () => {},
  ) {
    const exchange = { dir: join(dir.dir, 'far') };
    mkdirSync(exchange.dir, { recursive: true, mode: 0o700 });
    let peer: TransferPeer | undefined;
    const server: Endpoint = createProtocolServer({
      socketPath: dir.path('gw.sock'),
      agent: 'demo',
      store: createMemoryChannelStore(),
      onFrame: async (frame) => {
        if (!isTransfer(frame)) onOther(frame);
        if (!isTransfer(frame) || !peer) return;
        await peer.frame(frame);
        if (frame.type === 'transfer_chunk') onChunk(frame.offset);
      },
      onConnectionChange: (state) => peer?.connection(state.connected),
      pingIntervalMs: 60_000,
    });
    peer = createTransferPeer({
      exchange,
      maxBytes: 10 * 1024 * 1024,
      send: (frame) => server.send(frame),
      connected: () => server.connected,
      limits: LIMITS,
      logger: silentLogger,
    });
    await server.start();
    return { server, peer, exchange };
  }

  /** The sending side (a bridge), through `via` when given; records every frame it writes. */
  async function sender(via?: string) {
    const source = join(dir.dir, 'near');
    mkdirSync(source, { recursive: true, mode: 0o700 });
    const sent: AppFrame[] = [];
    let peer: TransferPeer | undefined;
    const client = createProtocolClient({
      socketPath: via ?? dir.path('gw.sock'),
      agent: 'demo',
      store: createMemoryChannelStore(),
      onFrame: async (frame) => {
        if (isTransfer(frame)) await peer?.frame(frame);
      },
      onConnectionChange: (state) => peer?.connection(state.connected),
      backoff: { initialMs: 5, maxMs: 20 },
    });
    peer = createTransferPeer({
      exchange: { dir: source },
      maxBytes: 10 * 1024 * 1024,
      send: (frame) => {
        sent.push(frame);
        return client.send(frame);
      },
      connected: () => client.connected,
      limits: LIMITS,
      logger: silentLogger,
    });
    stops.push(() => client.stop());
    await client.start();
    await waitFor(() => client.connected, 5_000, 'the sender connected');
    const file = (name: string, bytes: Buffer) => {
      writeFileSync(join(source, name), bytes);
      return join(source, name);
    };
    return { client, peer, sent, file };
  }

  it('carries a file whole: the receiver names it only once its checksum matched', async () => {
    const far = await receiver();
    stops.push(() => far.server.stop());
    const near = await sender();
    const bytes = randomBytes(20 * 1024 + 17);
    const outcome = await near.peer.put(near.file('in-1.bin', bytes), 'in-1.bin');
    expect(outcome).toEqual({ ok: true, path: join(far.exchange.dir, 'in-1.bin') });
    expect(sha(readFileSync(join(far.exchange.dir, 'in-1.bin')))).toBe(sha(bytes));
    expect(readdirSync(far.exchange.dir)).toEqual(['in-1.bin']);
    // Offered again (a restart, a lost verdict): answered at once from the whole file, no chunk sent.
    const chunksBefore = near.sent.filter((f) => f.type === 'transfer_chunk').length;
    expect(await near.peer.put(near.file('in-1.bin', bytes), 'in-1.bin')).toEqual(outcome);
    expect(near.sent.filter((f) => f.type === 'transfer_chunk')).toHaveLength(chunksBefore);
  });

  it('a receiver that dies between two chunks resumes from its part when it starts again: no byte twice', async () => {
    let handled = 0;
    let died: Promise<void> | undefined;
    let first: Awaited<ReturnType<typeof receiver>> | undefined;
    first = await receiver(() => {
      // After the fifth chunk, before the sixth: the receiving process is gone, its part left on disk.
      if (++handled === 5 && first) {
        first.peer.stop();
        died = first.server.stop();
      }
    });
    const near = await sender();
    const bytes = randomBytes(16 * 1024);
    const put = near.peer.put(near.file('in-2.bin', bytes), 'in-2.bin');
    await waitFor(() => died !== undefined, 5_000, 'the receiver to die');
    await died;
    const kept = readFileSync(join(first.exchange.dir, 'in-2.bin.part')).length;
    expect(kept).toBeGreaterThanOrEqual(5 * 1024);
    expect(kept).toBeLessThan(16 * 1024);
    expect(existsSync(join(first.exchange.dir, 'in-2.bin'))).toBe(false);

    const sentBefore = near.sent.length;
    const again = await receiver();
    stops.push(() => again.server.stop());
    expect(await put).toEqual({ ok: true, path: join(again.exchange.dir, 'in-2.bin') });
    expect(sha(readFileSync(join(again.exchange.dir, 'in-2.bin')))).toBe(sha(bytes));
    // The second life was offered the file and went on where the part ended: no byte was sent twice.
    const after = near.sent.slice(sentBefore);
    expect(after[0]?.type).toBe('transfer_offer');
    const offsets = after.flatMap((f) => (f.type === 'transfer_chunk' ? [f.offset] : []));
    expect(offsets[0]).toBe(kept);
    expect(offsets).toEqual(Array.from({ length: (16 * 1024 - kept) / 1024 }, (_, i) => kept + i * 1024));
    expect(readdirSync(again.exchange.dir)).toEqual(['in-2.bin']);
  });

  it('a sender that dies between two chunks sends the rest when it starts again, from the receiver’s part', async () => {
    const far = await receiver();
    stops.push(() => far.server.stop());
    const first = await sender();
    const bytes = randomBytes(24 * 1024);
    const source = first.file('out-5', bytes);
    const cut = first.peer.put(source, 'out-5');
    await waitFor(
      () => first.sent.filter((f) => f.type === 'transfer_chunk').length >= 4,
      5_000,
      'four chunks',
    );
    // The sending process goes: its put ends as stopped (the outbox offers the file again at its next start).
    first.peer.stop();
    await first.client.stop();
    expect(await cut).toMatchObject({ ok: false, stopped: true });
    const kept = readFileSync(join(far.exchange.dir, 'out-5.part')).length;
    expect(kept).toBeGreaterThan(0);

    const again = await sender();
    expect(await again.peer.put(source, 'out-5')).toEqual({
      ok: true,
      path: join(far.exchange.dir, 'out-5'),
    });
    expect(sha(readFileSync(join(far.exchange.dir, 'out-5')))).toBe(sha(bytes));
    const offsets = again.sent.flatMap((f) => (f.type === 'transfer_chunk' ? [f.offset] : []));
    expect(offsets[0]).toBeGreaterThanOrEqual(kept);
    expect(offsets).toHaveLength((bytes.length - (offsets[0] ?? 0)) / 1024);
  });

  it('a link cut between two chunks resumes on the next connection, with one verdict', async () => {
    const far = await receiver();
    stops.push(() => far.server.stop());
    const proxy = await startCuttingProxy(dir.path('proxy.sock'), dir.path('gw.sock'));
    stops.push(() => proxy.close());
    let cut = false;
    const near = await sender(dir.path('proxy.sock'));
    const bytes = randomBytes(32 * 1024);
    const watch = setInterval(() => {
      const chunks = near.sent.filter((f) => f.type === 'transfer_chunk').length;
      if (!cut && chunks >= 6) {
        cut = true;
        proxy.cutAll();
      }
    }, 1);
    stops.push(() => clearInterval(watch));
    const outcome = await near.peer.put(near.file('out-3', bytes), 'out-3');
    expect(cut).toBe(true);
    expect(outcome).toEqual({ ok: true, path: join(far.exchange.dir, 'out-3') });
    expect(sha(readFileSync(join(far.exchange.dir, 'out-3')))).toBe(sha(bytes));
    // Offered twice (before and after the cut), and the second offer did not start from nothing.
    const offers = near.sent.filter((f) => f.type === 'transfer_offer');
    expect(offers.length).toBeGreaterThanOrEqual(2);
    const chunks = near.sent.filter((f) => f.type === 'transfer_chunk');
    expect(chunks.length).toBeLessThan(32 + 2 * LIMITS.windowChunks + 1);
  });

  it('lets other frames through between the chunks of a transfer', async () => {
    const arrived: string[] = [];
    const far = await receiver(
      () => arrived.push('chunk'),
      (frame) => arrived.push(frame.type),
    );
    stops.push(() => far.server.stop());
    const near = await sender();
    const bytes = randomBytes(64 * 1024);
    const put = near.peer.put(near.file('out-4', bytes), 'out-4');
    await waitFor(() => near.sent.some((f) => f.type === 'transfer_chunk'), 5_000, 'the first chunk');
    await near.client.send({ type: 'operator_event', kind: 'stuck', message: 'between the chunks' });
    await put;
    // The event sent after the first chunk arrived with most of the file still to come.
    const at = arrived.indexOf('operator_event');
    expect(at).toBeGreaterThan(-1);
    expect(arrived.slice(at).filter((a) => a === 'chunk').length).toBeGreaterThan(50);
  });
});
