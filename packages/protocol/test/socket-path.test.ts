import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareSocketPath } from '../src/node/server.js';
import {
  MAX_SOCKET_PATH_BYTES,
  prepareSocketDirectory,
  shortSocketPath,
  shortSocketRoot,
} from '../src/node/socket-path.js';

const deep = (leaf: string) => path.join('/tmp', 'x'.repeat(60), 'y'.repeat(60), leaf, 'tools.sock');

describe('socket paths that fit by construction', () => {
  it('keeps a path that fits and moves one of ~150 bytes under the short root, under 107 bytes', () => {
    expect(shortSocketPath('/run/switchyard/demo/bridge.sock')).toBe('/run/switchyard/demo/bridge.sock');
    const long = deep('c-1001234567890_t42');
    expect(Buffer.byteLength(long)).toBeGreaterThan(140);
    const placed = shortSocketPath(long, { uid: 1234 });
    expect(placed.startsWith('/tmp/switchyard-1234/')).toBe(true);
    expect(Buffer.byteLength(placed)).toBeLessThanOrEqual(MAX_SOCKET_PATH_BYTES);
    expect(shortSocketPath(long, { uid: 1234 })).toBe(placed);
  });

  it('never gives two long paths that share their first 107 bytes one socket', () => {
    const a = shortSocketPath(deep('c-100123456789012345678901234567'), { uid: 1 });
    const b = shortSocketPath(deep('c-100123456789012345678901234568'), { uid: 1 });
    expect(a).not.toBe(b);
  });

  it('keeps the file name in a directory of its own when asked (the gateway socket)', () => {
    const placed = shortSocketPath(deep('run').replace('tools.sock', 'bridge.sock'), {
      uid: 7,
      keepBasename: true,
    });
    expect(path.basename(placed)).toBe('bridge.sock');
    expect(path.dirname(path.dirname(placed))).toBe('/tmp/switchyard-7');
  });
});

describe('preparing a socket under the short root', () => {
  const servers: Server[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await new Promise<void>((r) => s.close(() => r()));
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('refuses a short root this user does not own', () => {
    // uid 0 owns /tmp itself; asking for another uid's root finds a directory of someone else.
    const uid = (process.getuid?.() ?? 0) + 4242;
    const root = shortSocketRoot(uid);
    mkdirSync(root, { recursive: true });
    dirs.push(root);
    expect(() => prepareSocketDirectory(path.join(root, 'abc.sock'), uid)).toThrow(
      /not a directory of this user/,
    );
  });

  it('removes a stale socket nothing listens on, and refuses one that is listened on', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-sock-'));
    dirs.push(dir);
    const live = path.join(dir, 'live.sock');
    const server = createServer();
    servers.push(server);
    await new Promise<void>((r) => server.listen(live, () => r()));
    await expect(prepareSocketPath(live)).rejects.toThrow(/already listening/);

    // A socket file left by a process that died: bound, renamed away from its bound name, closed.
    const stale = path.join(dir, 'stale.sock');
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(path.join(dir, 'bound.sock'), () => r()));
    renameSync(path.join(dir, 'bound.sock'), stale);
    await new Promise<void>((r) => dead.close(() => r()));
    expect(existsSync(stale)).toBe(true);
    await prepareSocketPath(stale);
    expect(existsSync(stale)).toBe(false);
  });
});
