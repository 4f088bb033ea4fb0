/** Test helpers: short socket paths, a cutting proxy, and a raw peer that speaks bytes. */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFrame, FrameDecoder } from '../src/codec.js';

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
