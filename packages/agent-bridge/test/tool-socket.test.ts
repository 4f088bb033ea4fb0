import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MAX_SOCKET_PATH_BYTES, silentLogger } from '@switchyard/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { confirmsFileSends } from '../src/file-tools.js';
import { createToolSocket, TOOL_SOCKET, type ToolSocket, toolSocketPath } from '../src/tool-socket.js';

/** One call over the socket, as the MCP server makes it. */
function ask(socketPath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    socket.setEncoding('utf8');
    let buffer = '';
    socket.on('connect', () =>
      socket.write(`${JSON.stringify({ id: 'call-1', tool: 'send_file', paths: ['a.txt'] })}\n`),
    );
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.includes('\n')) {
        socket.destroy();
        resolve(buffer.trim());
      }
    });
    socket.on('error', reject);
  });
}

describe('the tool socket of a session in a deep state directory', () => {
  const dirs: string[] = [];
  const sockets: ToolSocket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) await s.stop();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  const deepStateDir = (): string => {
    const base = mkdtempSync(path.join(tmpdir(), 'sy-tools-'));
    dirs.push(base);
    const dir = path.join(
      base,
      'a-long-checkout-path/'.repeat(5),
      'bridge',
      'conversations',
      'c-1001234567890_t7',
    );
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const socketAt = (socketPath: string): ToolSocket => {
    const socket = createToolSocket({
      path: socketPath,
      handle: async (call) => ({ ok: true, text: `sent ${call.paths.join(',')}` }),
      log: silentLogger,
    });
    sockets.push(socket);
    return socket;
  };

  it('binds where the whole path fits, never a cut version of the naive one', async () => {
    const stateDir = deepStateDir();
    const naive = path.join(stateDir, TOOL_SOCKET);
    expect(Buffer.byteLength(naive)).toBeGreaterThan(140);
    const placed = toolSocketPath(stateDir);
    expect(Buffer.byteLength(placed)).toBeLessThanOrEqual(MAX_SOCKET_PATH_BYTES);
    await socketAt(placed).start();
    expect(await ask(placed)).toBe('{"id":"call-1","ok":true,"text":"sent a.txt"}');
    expect(existsSync(naive)).toBe(false);
  });

  it('starts over the socket a killed bridge left, and refuses to take one that still answers', async () => {
    const stateDir = deepStateDir();
    const placed = toolSocketPath(stateDir);
    // What kill -9 leaves: a socket file nobody listens on (bound elsewhere, moved here, closed).
    const dead = createServer();
    const bound = path.join(dirs[0] ?? tmpdir(), 'dead.sock');
    await new Promise<void>((resolve) => dead.listen(bound, () => resolve()));
    mkdirSync(path.dirname(placed), { recursive: true });
    renameSync(bound, placed);
    await new Promise<void>((resolve) => dead.close(() => resolve()));
    expect(existsSync(placed)).toBe(true);

    await socketAt(placed).start();
    expect(await ask(placed)).toContain('"ok":true');
    await expect(socketAt(placed).start()).rejects.toThrow(/already listening/);
    // The live one still answers.
    expect(await ask(placed)).toContain('"ok":true');
  });
});

describe('which conversations ask before a file is sent', () => {
  it('asks in groups and for a shared session, not in private chats, unless the chat says otherwise', () => {
    expect(confirmsFileSends(undefined, { chatId: -1001234567890 })).toBe(true);
    expect(confirmsFileSends(undefined, { chatId: -4000000001 })).toBe(true);
    expect(confirmsFileSends(undefined, undefined)).toBe(true);
    expect(confirmsFileSends(undefined, { chatId: 4242 })).toBe(false);
    expect(confirmsFileSends(false, { chatId: -1001234567890 })).toBe(false);
    expect(confirmsFileSends(true, { chatId: 4242 })).toBe(true);
  });
});
