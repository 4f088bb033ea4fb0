/**
 * Who may take the gateway's socket: the live bridge keeps it against a newcomer with the same agent
 * name; before its handshake a peer may send only small frames, must finish within the deadline, and
 * only a few may wait at once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../src/common/messages/frame.js';
import type { ChannelStore } from '../src/common/store.js';
import type { Endpoint } from '../src/node/endpoint.js';
import { createMemoryChannelStore } from '../src/node/memory-store.js';
import { createProtocolServer, MAX_HANDSHAKING } from '../src/node/server.js';
import { rawPeer, tempSocketDir, waitFor } from './harness.js';

type Received = { type: string; seq?: number; code?: string; message?: string; blockId?: string };

const hello = (instanceId: string, streamId: string) => ({
  type: 'hello',
  version: PROTOCOL_VERSION,
  agent: 'demo',
  instanceId,
  streamId,
  lastSeen: 0,
});

describe('admission', () => {
  let dir: ReturnType<typeof tempSocketDir>;
  let server: Endpoint;
  let store: ChannelStore;
  let connections: boolean[];
  beforeEach(async () => {
    dir = tempSocketDir();
    store = createMemoryChannelStore();
    connections = [];
    server = createProtocolServer({
      socketPath: dir.path('gw.sock'),
      agent: 'demo',
      store,
      onFrame: () => {},
      onConnectionChange: (state) => void connections.push(state.connected),
      handshakeTimeoutMs: 300,
    });
    await server.start();
  });
  afterEach(async () => {
    await server.stop();
    dir.remove();
  });

  it('keeps the live bridge: a newcomer with its name gets no frames, changes nothing, and is refused', async () => {
    const real = await rawPeer(dir.path('gw.sock'));
    real.writeFrame(hello('real', 'real-stream'));
    await waitFor(() => server.connected, 2_000, 'real bridge connected');
    // A frame the real bridge has not acknowledged (a raw peer never acks): pending in the outbox.
    await server.send({ type: 'text', turnId: 't', blockId: 'b1', text: 'one' });
    await waitFor(() => (real.received as Received[]).some((f) => f.blockId === 'b1'), 2_000, 'b1');
    const cursor = store.readPeer();

    const newcomer = await rawPeer(dir.path('gw.sock'));
    newcomer.writeFrame(hello('intruder', 'intruder-stream'));
    await newcomer.closed;
    const got = newcomer.received as Received[];
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ type: 'error', code: 'already_connected' });
    expect(got[0]?.message).toMatch(/another bridge \(instance real\) is connected.*stop the other bridge/);
    expect(store.readPeer()).toEqual(cursor);
    expect(store.pendingAfter(0).map((p) => p.seq)).toEqual([1]);
    expect(connections).toEqual([true]);

    // The real one keeps receiving.
    await server.send({ type: 'text', turnId: 't', blockId: 'b2', text: 'two' });
    await waitFor(() => (real.received as Received[]).some((f) => f.blockId === 'b2'), 2_000, 'b2');
    expect(server.connected).toBe(true);
    expect(real.ended).toBe(false);

    // Once it is gone, the next one is admitted and gets what was not acknowledged.
    real.destroy();
    await waitFor(() => !server.connected, 2_000, 'real bridge gone');
    const next = await rawPeer(dir.path('gw.sock'));
    next.writeFrame(hello('next', 'next-stream'));
    await waitFor(
      () => (next.received as Received[]).filter((f) => f.type === 'text').length === 2,
      2_000,
      'resend',
    );
    next.destroy();
  });

  it('refuses a frame over 64 KB before the handshake', async () => {
    const peer = await rawPeer(dir.path('gw.sock'));
    peer.writeFrame({ ...hello('big', 's'), padding: 'x'.repeat(70_000) });
    await peer.closed;
    expect(peer.received[0]).toMatchObject({ type: 'error', code: 'too_large' });
    expect(String((peer.received[0] as Received).message)).toMatch(/limit of 65536 bytes/);
  });

  it('closes a connection that does not complete its handshake in time, saying so', async () => {
    const peer = await rawPeer(dir.path('gw.sock'));
    const started = Date.now();
    await peer.closed;
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(peer.received[0]).toMatchObject({ type: 'error', code: 'handshake_timeout' });
  });

  it(`lets at most ${MAX_HANDSHAKING} connections wait for their handshake; more are closed at once`, async () => {
    const waiting = await Promise.all(
      Array.from({ length: MAX_HANDSHAKING }, () => rawPeer(dir.path('gw.sock'))),
    );
    // Let the server accept them before the extra one arrives.
    await new Promise((resolve) => setTimeout(resolve, 30));
    const extra = await rawPeer(dir.path('gw.sock'));
    await extra.closed;
    expect(extra.received).toEqual([]);
    expect(waiting.every((peer) => !peer.ended)).toBe(true);
    // One of the waiting ones may still complete its handshake.
    waiting[0]?.writeFrame(hello('late', 's'));
    await waitFor(() => server.connected, 2_000, 'handshake of a waiting peer');
    for (const peer of waiting) peer.destroy();
  });
});
