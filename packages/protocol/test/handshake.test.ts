import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handshakeVersion, versionMismatchText } from '../src/common/handshake.js';
import { PROTOCOL_VERSION } from '../src/common/messages/frame.js';
import type { Endpoint } from '../src/node/endpoint.js';
import { createMemoryChannelStore } from '../src/node/memory-store.js';
import { createProtocolServer } from '../src/node/server.js';
import { rawPeer, tempSocketDir, waitFor } from './harness.js';

type Received = { type: string; code?: string; message?: string; release?: string; host?: string };

describe('the version handshake', () => {
  let dir: ReturnType<typeof tempSocketDir>;
  let server: Endpoint;
  beforeEach(async () => {
    dir = tempSocketDir();
    server = createProtocolServer({
      socketPath: dir.path('gw.sock'),
      agent: 'demo',
      store: createMemoryChannelStore(),
      onFrame: () => {},
      release: '0.1.0-20261201T000000Z',
      host: 'gateway-box',
    });
    await server.start();
  });
  afterEach(async () => {
    await server.stop();
    dir.remove();
  });

  it("refuses a bridge of another version as a version mismatch even when its hello has another shape, naming both sides' release and host", async () => {
    // A later protocol's hello: this version's fields gone or changed. Refused for its version, not as a
    // bad frame: the operator must read "install the same release", not "connect only Switchyard".
    const peer = await rawPeer(dir.path('gw.sock'));
    peer.writeFrame({
      type: 'hello',
      version: PROTOCOL_VERSION + 1,
      agent: 'demo',
      session: { stream: 'x', seen: 0 },
      release: '0.2.0-20270101T000000Z',
      host: 'build-box',
    });
    await waitFor(() => peer.received.length > 0, 2_000, 'the refusal');
    const [refusal] = peer.received as Received[];
    expect(refusal?.type).toBe('error');
    expect(refusal?.code).toBe('version_mismatch');
    expect(refusal?.message).toBe(
      `protocol version ${PROTOCOL_VERSION + 1} is not supported by this gateway (release 0.1.0-20261201T000000Z on gateway-box), ` +
        `which speaks version ${PROTOCOL_VERSION}; the bridge (release 0.2.0-20270101T000000Z on build-box) speaks version ${PROTOCOL_VERSION + 1}: ` +
        'install the same Switchyard release for the gateway and the bridge, on both hosts',
    );
    peer.destroy();
  });

  it('tells the peer which release runs on which host in its welcome', async () => {
    const peer = await rawPeer(dir.path('gw.sock'));
    peer.writeFrame({
      type: 'hello',
      version: PROTOCOL_VERSION,
      agent: 'demo',
      instanceId: 'raw',
      streamId: 'raw-stream',
      lastSeen: 0,
      release: '0.1.0',
      host: 'build-box',
    });
    await waitFor(() => peer.received.length > 0, 2_000, 'the welcome');
    expect(peer.received[0]).toMatchObject({
      type: 'welcome',
      release: '0.1.0-20261201T000000Z',
      host: 'gateway-box',
    });
    peer.destroy();
  });
});

describe('handshakeVersion', () => {
  it('reads the version of any hello or welcome, and nothing else', () => {
    expect(handshakeVersion({ type: 'hello', version: 7, host: 'h', release: 3 })).toEqual({
      version: 7,
      release: undefined,
      host: 'h',
    });
    expect(handshakeVersion({ type: 'welcome', version: 2 })?.version).toBe(2);
    expect(handshakeVersion({ type: 'ack', version: 2 })).toBeUndefined();
    expect(handshakeVersion({ type: 'hello', version: '2' })).toBeUndefined();
    expect(handshakeVersion(null)).toBeUndefined();
  });

  it('says "on both hosts" only when the two sides are on different hosts', () => {
    const peer = { version: 9, release: undefined, host: 'same' };
    expect(versionMismatchText('client', { release: undefined, host: 'same' }, peer)).toBe(
      `protocol version 9 is not supported by this bridge (on same), which speaks version ${PROTOCOL_VERSION}; ` +
        'the gateway (on same) speaks version 9: install the same Switchyard release for the gateway and the bridge',
    );
  });
});
