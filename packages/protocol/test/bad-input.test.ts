import { statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeFrame } from '../src/common/codec.js';
import { ProtocolError } from '../src/common/errors.js';
import type { Logger } from '../src/common/logger.js';
import { PROTOCOL_VERSION } from '../src/common/messages/frame.js';
import { createProtocolClient } from '../src/node/client.js';
import type { Endpoint } from '../src/node/endpoint.js';
import { createMemoryChannelStore } from '../src/node/memory-store.js';
import { createProtocolServer } from '../src/node/server.js';
import { rawPeer, tempSocketDir, waitFor } from './harness.js';

function recordingLogger(lines: Array<Record<string, unknown>>): Logger {
  const make = (bindings: Record<string, unknown>): Logger => {
    const at =
      (level: string) =>
      (fields: object, message?: string): void =>
        void lines.push({ level, ...bindings, ...fields, message });
    return {
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      child: (b) => make({ ...bindings, ...b }),
    };
  };
  return make({});
}

const hello = (overrides: Record<string, unknown> = {}) => ({
  type: 'hello',
  version: PROTOCOL_VERSION,
  agent: 'demo',
  instanceId: 'raw',
  streamId: 'raw-stream',
  lastSeen: 0,
  ...overrides,
});

describe('bad input on the socket', () => {
  let dir: ReturnType<typeof tempSocketDir>;
  let server: Endpoint;
  let received: unknown[];
  let logs: Array<Record<string, unknown>>;
  beforeEach(async () => {
    dir = tempSocketDir();
    received = [];
    logs = [];
    server = createProtocolServer({
      socketPath: dir.path('gw.sock'),
      agent: 'demo',
      store: createMemoryChannelStore(),
      onFrame: (frame) => void received.push(frame),
      logger: recordingLogger(logs),
      maxFrameBytes: 64 * 1024,
      pingIntervalMs: 50,
      pingTimeoutMs: 300,
    });
    await server.start();
  });
  afterEach(async () => {
    await server.stop();
    dir.remove();
  });

  /** After any refusal the server must still serve a well-behaved peer. */
  async function expectServerStillServes() {
    const peer = await rawPeer(dir.path('gw.sock'));
    peer.writeFrame(hello());
    await waitFor(
      () => peer.received.some((f) => (f as { type: string }).type === 'welcome'),
      2_000,
      'welcome',
    );
    peer.destroy();
  }

  const cases: Array<{
    name: string;
    send: (peer: Awaited<ReturnType<typeof rawPeer>>) => void;
    code: string;
    detail: RegExp;
  }> = [
    {
      name: 'garbage bytes',
      send: (peer) => peer.writeBytes(Buffer.from([0, 0, 0, 3, 0xc1, 0xc1, 0xc1])),
      code: 'bad_frame',
      detail: /not valid msgpack/,
    },
    {
      name: 'a frame over the size limit',
      send: (peer) => {
        const header = Buffer.alloc(4);
        header.writeUInt32BE(10 * 1024 * 1024);
        peer.writeBytes(header);
      },
      code: 'too_large',
      detail: /exceeds the limit of 65536 bytes/,
    },
    {
      name: 'an unknown type',
      send: (peer) => peer.writeFrame({ type: 'format_disk' }),
      code: 'bad_message',
      detail: /format_disk/,
    },
    {
      name: 'a known type with wrong fields',
      send: (peer) => peer.writeFrame(hello({ lastSeen: 'yesterday' })),
      code: 'bad_message',
      detail: /lastSeen/,
    },
    {
      name: 'a wrong protocol version',
      send: (peer) => peer.writeFrame(hello({ version: PROTOCOL_VERSION + 1 })),
      code: 'version_mismatch',
      detail: new RegExp(`version ${PROTOCOL_VERSION + 1} is not supported.*same Switchyard release`),
    },
    {
      name: 'another agent',
      send: (peer) => peer.writeFrame(hello({ agent: 'other' })),
      code: 'wrong_agent',
      detail: /serves agent "demo", not "other"/,
    },
    {
      name: 'an application frame before the handshake',
      send: (peer) => peer.writeFrame({ type: 'interrupt', seq: 1, commandId: 'c', route: { chatId: 1 } }),
      code: 'bad_message',
      detail: /expected hello first/,
    },
    {
      name: 'a reliable frame without its sequence number',
      send: (peer) => {
        peer.writeFrame(hello());
        peer.writeFrame({ type: 'interrupt', commandId: 'c', route: { chatId: 1 } });
      },
      code: 'bad_message',
      detail: /must carry seq/,
    },
    {
      name: 'a gap in sequence numbers',
      send: (peer) => {
        peer.writeFrame(hello());
        peer.writeFrame({ type: 'interrupt', seq: 1, commandId: 'c1', route: { chatId: 1 } });
        peer.writeFrame({ type: 'interrupt', seq: 3, commandId: 'c3', route: { chatId: 1 } });
      },
      code: 'sequence_gap',
      detail: /expected seq 2, got 3/,
    },
  ];

  for (const { name, send, code, detail } of cases) {
    it(`answers ${name} with an error frame naming it, logs it, closes, and keeps serving`, async () => {
      const peer = await rawPeer(dir.path('gw.sock'));
      send(peer);
      await peer.closed;
      const error = peer.received.find((f) => (f as { type: string }).type === 'error') as
        | { code: string; message: string }
        | undefined;
      expect(error?.code).toBe(code);
      expect(error?.message).toMatch(detail);
      expect(logs.some((line) => line.event === 'protocol_error' && line.code === code)).toBe(true);
      await expectServerStillServes();
    });
  }

  it('drops a truncated frame when the peer hangs up mid-frame, and logs it', async () => {
    const peer = await rawPeer(dir.path('gw.sock'));
    peer.writeFrame(hello());
    const whole = Buffer.from([0, 0, 0, 50, 1, 2, 3]);
    peer.writeBytes(whole);
    peer.socket.end();
    await peer.closed;
    await waitFor(() => logs.some((line) => line.event === 'truncated_frame'), 2_000, 'truncation log');
    expect(received).toEqual([]);
    await expectServerStillServes();
  });

  it('drops a peer that stops answering pings', async () => {
    const peer = await rawPeer(dir.path('gw.sock'));
    peer.writeFrame(hello());
    peer.socket.pause(); // reads nothing, answers nothing
    await waitFor(() => logs.some((line) => line.event === 'peer_silent'), 3_000, 'silent peer dropped');
    peer.socket.resume();
    await peer.closed;
  });

  it('the bridge side reports a gateway that speaks another version, and keeps retrying', async () => {
    const sockets = new Set<net.Socket>();
    const fakeGateway = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.write(
        encodeFrame({
          type: 'welcome',
          version: 99,
          agent: 'demo',
          instanceId: 'g',
          streamId: 's',
          lastSeen: 0,
        }),
      );
    });
    const path = dir.path('fake.sock');
    await new Promise<void>((resolve) => fakeGateway.listen(path, resolve));
    const clientLogs: Array<Record<string, unknown>> = [];
    const client = createProtocolClient({
      socketPath: path,
      agent: 'demo',
      store: createMemoryChannelStore(),
      onFrame: () => {},
      logger: recordingLogger(clientLogs),
      backoff: { initialMs: 10, maxMs: 20 },
    });
    await client.start();
    await waitFor(
      () =>
        clientLogs.filter((line) => line.event === 'protocol_error' && line.code === 'version_mismatch')
          .length >= 2,
      3_000,
      'version refusal, twice',
    );
    const line = clientLogs.find((l) => l.code === 'version_mismatch');
    expect(String(line?.detail)).toMatch(/version 99 is not supported by this bridge/);
    expect(client.connected).toBe(false);
    await client.stop();
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => fakeGateway.close(() => resolve()));
  });
});

describe('socket file', () => {
  let dir: ReturnType<typeof tempSocketDir>;
  beforeEach(() => {
    dir = tempSocketDir();
  });
  afterEach(() => dir.remove());

  const make = (socketPath: string) =>
    createProtocolServer({ socketPath, agent: 'demo', store: createMemoryChannelStore(), onFrame: () => {} });

  it('is created with mode 0600', async () => {
    const server = make(dir.path('gw.sock'));
    await server.start();
    expect(statSync(dir.path('gw.sock')).mode & 0o777).toBe(0o600);
    await server.stop();
  });

  it('gets exactly the socket and directory modes asked, under umask 0000', async () => {
    const previous = process.umask(0o000);
    try {
      const shared = dir.path('run');
      const server = createProtocolServer({
        socketPath: `${shared}/gw.sock`,
        agent: 'test',
        store: createMemoryChannelStore(),
        socketMode: 0o660,
        directoryMode: 0o750,
        onFrame: () => {},
      });
      await server.start();
      expect((statSync(shared).mode & 0o777).toString(8)).toBe('750');
      expect((statSync(`${shared}/gw.sock`).mode & 0o777).toString(8)).toBe('660');
      await server.stop();
      // The defaults under the same umask: nothing for the group or others.
      const closed = make(dir.path('gw.sock'));
      await closed.start();
      expect((statSync(dir.path('gw.sock')).mode & 0o777).toString(8)).toBe('600');
      await closed.stop();
    } finally {
      process.umask(previous);
    }
  });

  it('replaces a stale socket left by a crashed run', async () => {
    const stale = net.createServer();
    await new Promise<void>((resolve) => stale.listen(dir.path('gw.sock'), resolve));
    // Simulate a crash: the file stays, nobody listens.
    (stale as unknown as { _handle: { close(): void } })._handle.close();
    const server = make(dir.path('gw.sock'));
    await server.start();
    await server.stop();
  });

  it('refuses to steal the socket of a live listener', async () => {
    const first = make(dir.path('gw.sock'));
    await first.start();
    const second = make(dir.path('gw.sock'));
    await expect(second.start()).rejects.toThrow(/another process is already listening/);
    await first.stop();
  });

  it('refuses a path that is not a socket', async () => {
    writeFileSync(dir.path('gw.sock'), 'not a socket');
    await expect(make(dir.path('gw.sock')).start()).rejects.toThrow(/exists and is not a socket/);
  });

  it('refuses a path over the Unix socket limit, saying so', async () => {
    const long = dir.path('x'.repeat(120));
    const error = await make(long)
      .start()
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(String(error)).toMatch(/over the 107-byte limit/);
  });
});
