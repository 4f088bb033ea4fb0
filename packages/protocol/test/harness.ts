/** Test helpers: short socket paths, a cutting proxy, a raw peer that speaks bytes, and in-memory links. */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { encodeFrame, FrameDecoder } from '../src/common/codec.js';
import { silentLogger } from '../src/common/logger.js';
import type { AppFrame } from '../src/common/messages/frame.js';
import type { Refusal } from '../src/common/refusal.js';
import type { ChannelStore } from '../src/common/store.js';
import { Connection } from '../src/node/connection.js';
import type { ConnectionOptions } from '../src/node/connection-options.js';
import { sendThrough } from '../src/node/endpoint.js';
import { createMemoryChannelStore } from '../src/node/memory-store.js';

export function tempSocketDir(): { dir: string; path(name: string): string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'sy-p-'));
  return {
    dir,
    path: (name) => join(dir, name),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A proxy between two Unix sockets whose live connections the test can cut at any moment. */
export async function startCuttingProxy(listenPath: string, targetPath: string) {
  const pairs = new Set<[net.Socket, net.Socket]>();
  const server = net.createServer((downstream) => {
    const upstream = net.connect(targetPath);
    const pair: [net.Socket, net.Socket] = [downstream, upstream];
    pairs.add(pair);
    downstream.pipe(upstream);
    upstream.pipe(downstream);
    const drop = () => {
      pairs.delete(pair);
      downstream.destroy();
      upstream.destroy();
    };
    downstream.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(listenPath, resolve));
  return {
    cutAll(): number {
      const n = pairs.size;
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      pairs.clear();
      return n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const [a, b] of pairs) {
          a.destroy();
          b.destroy();
        }
        server.close(() => resolve());
      }),
  };
}

/** A raw connection that writes arbitrary bytes and collects decoded frames. */
export async function rawPeer(path: string) {
  const socket = net.connect(path);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const decoder = new FrameDecoder();
  const received: unknown[] = [];
  let ended = false;
  socket.on('data', (chunk: Buffer) => {
    for (const event of decoder.push(chunk)) if (event.kind === 'value') received.push(event.value);
  });
  const closed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      ended = true;
      resolve();
    }),
  );
  socket.on('error', () => {});
  return {
    socket,
    received,
    closed,
    get ended() {
      return ended;
    },
    writeBytes: (bytes: Buffer) => socket.write(bytes),
    writeFrame: (value: unknown) => socket.write(encodeFrame(value)),
    destroy: () => socket.destroy(),
  };
}

export async function waitFor(check: () => boolean, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Two connected in-memory stream ends: what one writes the other reads. Destroying or ending one ends
 * the other, as a socket pair would.
 */
export function memoryPair(): [Duplex, Duplex] {
  const ends: Duplex[] = [];
  const make = (other: () => Duplex) =>
    new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        const peer = other();
        if (!peer.destroyed) peer.push(chunk);
        callback();
      },
      final(callback) {
        const peer = other();
        if (!peer.destroyed) peer.push(null);
        callback();
      },
    });
  const a = make(() => ends[1] as Duplex);
  const b = make(() => ends[0] as Duplex);
  ends.push(a, b);
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
  a.on('error', () => {});
  b.on('error', () => {});
  return [a, b];
}

/** What one side of an in-memory link holds and has seen. */
export interface LinkSide {
  store: ChannelStore;
  received: AppFrame[];
  refusals: Refusal[];
  onFrame?: (frame: AppFrame) => void | Promise<void>;
}

/**
 * Two {@link Connection}s over a {@link memoryPair}: a gateway (server role) and a bridge (client role)
 * with the given stores. `send` goes through the same path as the endpoints' `send`.
 */
export function memoryLink(
  gateway: LinkSide,
  bridge: LinkSide,
  extra: Partial<ConnectionOptions> = {},
): {
  gateway: Connection;
  bridge: Connection;
  send(from: 'gateway' | 'bridge', frame: AppFrame): Promise<void>;
  close(): void;
} {
  const [a, b] = memoryPair();
  const make = (socket: Duplex, role: 'server' | 'client', side: LinkSide) =>
    new Connection(socket, {
      role,
      agent: 'demo',
      instanceId: role,
      store: side.store,
      logger: silentLogger,
      handlerRetryDelaysMs: [1, 1],
      onFrame: side.onFrame ?? ((frame) => void side.received.push(frame)),
      onRefused: (refusal) => void side.refusals.push(refusal),
      ...extra,
    });
  const gw = make(a, 'server', gateway);
  const br = make(b, 'client', bridge);
  return {
    gateway: gw,
    bridge: br,
    send: (from, frame) =>
      from === 'gateway'
        ? sendThrough(gateway.store, () => gw, frame, undefined)
        : sendThrough(bridge.store, () => br, frame, undefined),
    close() {
      gw.close('test over');
      br.close('test over');
    },
  };
}

/** A side of a link with a fresh in-memory store. */
export function side(store: ChannelStore = createMemoryChannelStore()): LinkSide {
  return { store, received: [], refusals: [] };
}
