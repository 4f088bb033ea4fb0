/**
 * The bridge's end of Switchyard's MCP server: a Unix socket in the session's state directory on which
 * the MCP server (a child of `claude`, so it outlives a bridge restart) asks for tool calls and gets
 * their results. One JSON object a line each way: a {@link ToolCall} in, a {@link ToolReply} out with the
 * same `id`.
 *
 * Contract: the socket only carries calls; what a call does, and that a call asked twice (the MCP server
 * reconnects and re-asks after a bridge restart, with the same id) has one effect, is the handler's
 * (`file-outbox.ts`). A line that is not a valid call is answered with an error reply when it has an id,
 * and otherwise ends the connection; nothing a peer writes stops the bridge.
 *
 * Where: `tools.sock` in the session's state directory when that path fits a Unix socket's 107 bytes,
 * otherwise a hashed name in this user's private short directory ({@link toolSocketPath}). A socket left
 * by a bridge that died is removed at start only once nothing answers on it.
 */
import { chmodSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import {
  describeError,
  type Logger,
  prepareSocketDirectory,
  prepareSocketPath,
  shortSocketPath,
} from '@switchyard/protocol';
import { z } from 'zod';

/** The file name of the socket in the session's state directory. */
export const TOOL_SOCKET = 'tools.sock';

/**
 * The tool socket of the session whose state directory is `stateDir`: the same for every bridge that
 * runs it (the MCP server keeps the path it was started with across bridge restarts), and never longer
 * than a socket path may be.
 */
export function toolSocketPath(stateDir: string, uid?: number): string {
  return shortSocketPath(join(stateDir, TOOL_SOCKET), uid === undefined ? {} : { uid });
}

/** One tool call, as the MCP server sends it. */
export const toolCallSchema = z.object({
  id: z.string().min(1).max(200),
  tool: z.enum(['send_file', 'send_photo', 'send_files']),
  paths: z.array(z.string().min(1).max(4096)).min(1).max(10),
  caption: z.string().max(4096).optional(),
});
/** One tool call, as the MCP server sends it. */
export type ToolCall = z.infer<typeof toolCallSchema>;

/** The answer to a {@link ToolCall}: `ok: false` is a tool error the model sees. */
export interface ToolReply {
  id: string;
  ok: boolean;
  text: string;
}

/** Options of {@link createToolSocket}. */
export interface ToolSocketOptions {
  path: string;
  /** Carries out a call; must not reject (an unexpected failure is a reply with `ok: false`). */
  handle(call: ToolCall): Promise<Omit<ToolReply, 'id'>>;
  log: Logger;
}

/** The socket's lifecycle handle. */
export interface ToolSocket {
  /**
   * Removes a stale socket file (one nothing listens on), listens (0600). Rejects when another process
   * listens on the path: two bridges must not serve one session.
   */
  start(): Promise<void>;
  /** Stops listening and closes connections; calls in flight are abandoned (the MCP server re-asks). */
  stop(): Promise<void>;
}

/** Longest request line accepted: ten paths and a caption fit many times over. */
const MAX_LINE = 256 * 1024;

/** Builds the socket; nothing listens until `start()`. */
export function createToolSocket(options: ToolSocketOptions): ToolSocket {
  const { log } = options;
  let server: Server | undefined;
  const sockets = new Set<Socket>();

  const serve = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', (err) => log.debug({ err: describeError(err) }, 'tool socket connection error'));
    socket.setEncoding('utf8');
    let buffer = '';
    const reply = (r: ToolReply): void => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(r)}\n`);
    };
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > MAX_LINE && !buffer.includes('\n')) {
        log.warn({ bytes: buffer.length }, 'tool socket line too long; closing');
        socket.destroy();
        return;
      }
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim() === '') continue;
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          socket.destroy();
          return;
        }
        const parsed = toolCallSchema.safeParse(value);
        if (!parsed.success) {
          const id = (value as { id?: unknown } | null)?.id;
          if (typeof id === 'string') reply({ id, ok: false, text: `invalid call: ${parsed.error.message}` });
          else socket.destroy();
          continue;
        }
        const call = parsed.data;
        void options.handle(call).then(
          (result) => reply({ id: call.id, ...result }),
          (err: unknown) => reply({ id: call.id, ok: false, text: `failed: ${describeError(err)}` }),
        );
      }
    });
  };

  return {
    async start() {
      prepareSocketDirectory(options.path);
      await prepareSocketPath(options.path);
      const s = createServer(serve);
      server = s;
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        // The umask closes the window between bind() and chmod() in which others could connect.
        const previousUmask = process.umask(0o177);
        try {
          s.listen(options.path, () => {
            s.off('error', reject);
            resolve();
          });
        } finally {
          process.umask(previousUmask);
        }
      });
      chmodSync(options.path, 0o600);
      s.on('error', (err) => log.warn({ err: describeError(err) }, 'tool socket error'));
    },
    async stop() {
      const s = server;
      server = undefined;
      for (const socket of sockets) socket.destroy();
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
}
