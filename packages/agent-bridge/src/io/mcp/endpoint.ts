/**
 * The HTTP shell of Switchyard's MCP server (`server.ts`): one endpoint per conversation, served by the
 * bridge itself on 127.0.0.1 (MCP's Streamable HTTP transport, stateless), which `claude` is pointed at
 * by an `"type": "http"` entry in its `--mcp-config`. No helper process: a live conversation costs the
 * bridge one listening socket.
 *
 * Contracts:
 * - Only this conversation's `claude` gets in: every request must carry `Authorization: Bearer
 *   <secret>` (the secret is in the conversation's `mcp.json`, 0600 in its state directory) and a
 *   loopback `Host` (no DNS rebinding). Anything else is 403 and reaches no tool.
 * - `claude` outlives the bridge, so the endpoint must be found again where `claude` was told it is: the
 *   caller passes the previous port and secret back in, and gets a new port only if that one is taken.
 * - A tool call is answered on an SSE stream whose first event carries a resume token (the JSON-RPC id
 *   and the call's idempotency key) and a retry hint. If the bridge stops mid-call the stream breaks,
 *   `claude`'s MCP client reconnects (GET with `Last-Event-ID`) after the hint, twice at most, and the
 *   new bridge joins the same call in the file outbox and answers it there: one send, one answer.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { describeError, type Logger } from '@switchyard/protocol';
import type { ScheduleCall } from './schedule-tools.js';
import {
  answerMessage,
  parseResumeToken,
  type RpcId,
  resumeToken,
  rpcResult,
  type ToolAnswer,
  type ToolCallInput,
  toolResult,
} from './server.js';

/** Options of {@link createMcpEndpoint}. */
export interface McpEndpointOptions {
  /** The port `claude` was last given; undefined or taken: any free port. */
  port?: number | undefined;
  /** The conversation's bearer secret. */
  secret: string;
  /** Carries out a new call under its idempotency key; must not reject. */
  call(key: string, call: ToolCallInput): Promise<ToolAnswer>;
  /** Joins a call asked before a restart; undefined if the outbox never got it. */
  rejoin(key: string): Promise<ToolAnswer> | undefined;
  /** Carries out a schedule tool call (`schedule-tools.ts`); must not reject. Absent: the tools say so. */
  schedule?: ((call: ScheduleCall) => Promise<ToolAnswer>) | undefined;
  /** The retry hint sent to the client: how long it waits before reconnecting (default 3 s). */
  retryMs?: number | undefined;
  version: string;
  log: Logger;
}

/** The endpoint's lifecycle handle. */
export interface McpEndpoint {
  /** Listens on 127.0.0.1; resolves with the port. */
  start(): Promise<number>;
  /** Stops listening and breaks open streams (their clients reconnect to the next bridge). */
  stop(): Promise<void>;
}

/** The path the endpoint answers on. */
export const MCP_PATH = '/mcp';
/** Largest request body accepted: ten paths and a caption fit many times over. */
const MAX_BODY = 1024 * 1024;
/** What a rejoin without an outbox entry answers: the bridge stopped before the file was queued. */
const LOST: ToolAnswer = {
  ok: false,
  text: 'Switchyard restarted before this file was queued, so nothing was sent. Call the tool again.',
};

/** Builds the endpoint; nothing listens until `start()`. */
export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const { log } = options;
  const retryMs = options.retryMs ?? 3000;
  const secret = Buffer.from(`Bearer ${options.secret}`);
  let server: Server | undefined;
  let port = 0;

  const allowed = (req: IncomingMessage): boolean => {
    const host = req.headers.host ?? '';
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return false;
    const given = Buffer.from(req.headers.authorization ?? '');
    return given.length === secret.length && timingSafeEqual(given, secret);
  };

  /** Opens the SSE stream of one call, primes it with its resume token, and answers when `answer` does. */
  const stream = (res: ServerResponse, rpcId: RpcId, key: string, answer: Promise<ToolAnswer>): void => {
    const token = resumeToken(rpcId, key);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(`id: ${token}\nretry: ${retryMs}\ndata: \n\n`);
    void answer.then((result) => {
      if (res.destroyed) return;
      const message = JSON.stringify(rpcResult(rpcId, toolResult(result)));
      res.end(`event: message\nid: ${token}\ndata: ${message}\n\n`);
    });
  };

  const json = (res: ServerResponse, status: number, body?: object): void => {
    if (body === undefined) {
      res.writeHead(status).end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  const post = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY) return json(res, 413);
      chunks.push(chunk);
    }
    let value: unknown;
    try {
      value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return json(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    }
    const step = answerMessage(value, options.version);
    switch (step.kind) {
      case 'reply':
        return json(res, 200, step.message);
      case 'accepted':
        return json(res, 202);
      case 'invalid':
        return json(res, 400, step.message);
      case 'call': {
        const key = randomUUID();
        return stream(res, step.rpcId, key, options.call(key, step.call));
      }
      case 'schedule': {
        const answer = options.schedule
          ? await options.schedule(step.call)
          : { ok: false, text: 'schedules are not available in this conversation' };
        return json(res, 200, rpcResult(step.rpcId, toolResult(answer)));
      }
    }
  };

  const get = (req: IncomingMessage, res: ServerResponse): void => {
    const header = req.headers['last-event-id'];
    const resume = typeof header === 'string' ? parseResumeToken(header) : undefined;
    if (!resume) {
      json(res, 405); // no standalone stream: this server never sends anything unasked
      return;
    }
    log.info({ fileId: resume.key }, 'a tool call reconnected after a restart');
    stream(res, resume.rpcId, resume.key, options.rejoin(resume.key) ?? Promise.resolve(LOST));
  };

  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== MCP_PATH) {
      json(res, 404);
    } else if (!allowed(req)) {
      log.warn({ host: req.headers.host }, 'refused an MCP request without this conversation’s secret');
      json(res, 403);
    } else if (req.method === 'POST') {
      post(req, res).catch((err: unknown) => {
        log.warn({ err: describeError(err) }, 'MCP request failed');
        if (!res.headersSent) json(res, 500);
        else res.destroy();
      });
    } else if (req.method === 'GET') {
      get(req, res);
    } else {
      json(res, 405);
    }
  };

  const listen = (s: Server, at: number): Promise<number> =>
    new Promise((resolve, reject) => {
      s.once('error', reject);
      s.listen(at, '127.0.0.1', () => {
        s.off('error', reject);
        const address = s.address();
        resolve(typeof address === 'object' && address ? address.port : at);
      });
    });

  return {
    async start() {
      const s = createServer(serve);
      server = s;
      try {
        port = await listen(s, options.port ?? 0);
      } catch (err) {
        if (!options.port) throw err;
        log.warn(
          { err: describeError(err), port: options.port },
          'the MCP port a running claude knows is taken; its file tools fail until it restarts',
        );
        port = await listen(s, 0);
      }
      s.on('error', (err) => log.warn({ err: describeError(err) }, 'MCP endpoint error'));
      return port;
    },
    async stop() {
      const s = server;
      server = undefined;
      if (!s) return;
      const closed = new Promise<void>((resolve) => s.close(() => resolve()));
      s.closeAllConnections();
      await closed;
    },
  };
}
