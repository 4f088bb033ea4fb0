/**
 * What the listening end tells its owner of the peer, for `switchyard status` and `doctor` on a bridge
 * on another host: which release on which host connected, each ping's round trip, and the refusal of a
 * peer at its handshake (a bridge of another version is otherwise only a line in the gateway's log).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../src/common/messages/frame.js';
import type { Endpoint } from '../src/node/endpoint.js';
import { createMemoryChannelStore } from '../src/node/memory-store.js';
import { createProtocolServer } from '../src/node/server.js';
import { rawPeer, tempSocketDir, waitFor } from './harness.js';

const hello = (version = PROTOCOL_VERSION) => ({
  type: 'hello',
  version,
  agent: 'demo',
  instanceId: 'raw',
  streamId: 'raw-stream',
  lastSeen: 0,
  release: '0.1.0-worker',
  host: 'build-box',
});

describe("the server's report of its peer", () => {
  let dir: ReturnType<typeof tempSocketDir>;
  let server: Endpoint;
  const changes: unknown[] = [];
  const trips: number[] = [];
  const refusals: Array<{ code: string; message: string }> = [];
  beforeEach(async () => {
    changes.length = 0;
    trips.length = 0;
    refusals.length = 0;
    dir = tempSocketDir();
    server = createProtocolServer({
      socketPath: dir.path('gw.sock'),
      agent: 'demo',
      store: createMemoryChannelStore(),
      onFrame: () => {},
      pingIntervalMs: 40,
      onConnectionChange: (change) => changes.push(change),
      onRoundTrip: (ms) => trips.push(ms),
      onHandshakeRefused: (refusal) => refusals.push(refusal),
    });
    await server.start();
  });
  afterEach(async () => {
    await server.stop();
    dir.remove();
  });

  it("names the peer's release and host, and measures each ping's round trip to its pong", async () => {
    const peer = await rawPeer(dir.path('gw.sock'));
    peer.writeFrame(hello());
    // A peer that answers each ping 30 ms late: the round trip is at least that.
    let answered = 0;
    const answer = setInterval(() => {
      const pings = peer.received.filter((f) => (f as { type: string }).type === 'ping') as Array<{
        nonce: number;
      }>;
      for (const ping of pings.slice(answered)) {
        answered++;
        setTimeout(() => peer.writeFrame({ type: 'pong', nonce: ping.nonce }), 30);
      }
    }, 5);
    try {
      await waitFor(() => trips.length >= 2, 3_000, 'two round trips');
    } finally {
      clearInterval(answer);
      peer.destroy();
    }
    expect(changes[0]).toEqual({
      connected: true,
      peerInstanceId: 'raw',
      peerRelease: '0.1.0-worker',
      peerHost: 'build-box',
    });
    for (const ms of trips) expect(ms).toBeGreaterThanOrEqual(25);
    expect(refusals).toEqual([]);
  });

  it('tells its owner when it refuses a peer of another version, in the words the peer is sent', async () => {
    const peer = await rawPeer(dir.path('gw.sock'));
    peer.writeFrame(hello(PROTOCOL_VERSION + 1));
    await waitFor(() => refusals.length > 0, 2_000, 'the refusal');
    expect(refusals[0]?.code).toBe('version_mismatch');
    expect(refusals[0]?.message).toMatch(
      /^protocol version \d+ is not supported by this gateway .*install the same Switchyard release/,
    );
    expect(refusals[0]?.message).toContain('release 0.1.0-worker on build-box');
    expect(changes).toEqual([]);
    peer.destroy();
  });
});
