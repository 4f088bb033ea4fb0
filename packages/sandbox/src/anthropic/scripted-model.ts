/**
 * The scripted model: a local Anthropic Messages API on 127.0.0.1 that answers the real `claude` CLI from
 * a script, so the whole system runs offline and tests are deterministic. Built on node:http only.
 *
 * Point the CLI at it with `ANTHROPIC_BASE_URL=<baseUrl>` and any `ANTHROPIC_API_KEY`. It answers
 * `POST /v1/messages` (streaming SSE or JSON), `POST /v1/messages/count_tokens` and `GET /v1/models`;
 * anything else gets a 404 error body. Every request is recorded, minus its credentials.
 */

import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { defaultScript } from './default-script.js';
import type { RecordedRequest, ScriptedModel, ScriptedModelOptions } from './model-options.js';
import { encodeSse, messageJson, type Reply, resolveReply, sseEvents } from './reply.js';
import { type RequestView, viewRequest } from './request.js';
import {
  defaultExhausted,
  defaultSide,
  errorTypeFor,
  positionOf,
  type Rule,
  type Script,
  type Step,
  stepsFor,
  type TurnContext,
} from './script.js';

function toScript(s: Script | readonly Rule[]): Script {
  return Array.isArray(s) ? { rules: s as readonly Rule[] } : (s as Script);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'request-id': `req_scripted_${Date.now().toString(36)}`,
    ...headers,
  });
  res.end(text);
}

/**
 * Creates a scripted Messages API. Nothing listens until `start()`.
 *
 * ```ts
 * const model = createScriptedModel({ script: [rule('hi', say('Hello!'))] });
 * const { baseUrl } = await model.start();
 * // spawn claude with ANTHROPIC_BASE_URL=baseUrl …
 * await model.stop();
 * ```
 */
export function createScriptedModel(options: ScriptedModelOptions = {}): ScriptedModel {
  let script = toScript(options.script ?? defaultScript());
  const chunkSize = options.chunkSize ?? 16;
  const defaultDelay = options.chunkDelayMs ?? 0;
  const requests: RecordedRequest[] = [];
  /** Failures (errors and hangs) served per turn, so retries move on to the next step. */
  const failures = new Map<string, number>();
  const waiters = new Set<() => void>();
  const stopping = new AbortController();
  let server: Server | undefined;
  let baseUrl: string | undefined;
  let messageCount = 0;
  let toolUseCount = 0;
  let stopped: Promise<void> | undefined;

  const nextToolUseId = () => `toolu_scripted_${String(++toolUseCount).padStart(4, '0')}`;

  function record(r: RecordedRequest): void {
    requests.push(r);
    options.onRequest?.(r);
    notify();
  }

  /** Re-runs pending `waitForRequest` checks: on arrival and once the answer is known. */
  function notify(): void {
    for (const w of [...waiters]) w();
  }

  function turnKey(view: RequestView, body: { messages: readonly unknown[] }): string {
    const prefix = JSON.stringify(body.messages.slice(0, view.userTextIndex + 1));
    return `${view.kind}:${createHash('sha256').update(prefix).digest('hex')}`;
  }

  function chooseStep(ctx: TurnContext): Step {
    if (ctx.kind === 'side') return (script.side ?? defaultSide)(ctx);
    const source = positionOf(stepsFor(script, ctx), ctx.step);
    if (source === undefined) return (script.exhausted ?? defaultExhausted)(ctx);
    return typeof source === 'function' ? source(ctx) : source;
  }

  async function streamReply(
    res: ServerResponse,
    reply: Reply,
    model: string,
    inputTokens: number,
    stream: boolean,
  ) {
    const resolved = resolveReply(reply, {
      messageId: `msg_scripted_${String(++messageCount).padStart(4, '0')}`,
      model,
      inputTokens,
      nextToolUseId,
    });
    const answer = {
      type: 'reply' as const,
      messageId: resolved.meta.messageId,
      blocks: resolved.blocks,
      stopReason: resolved.stopReason,
      completed: false,
    };
    if (reply.startDelayMs !== undefined && reply.startDelayMs > 0) {
      try {
        await sleep(reply.startDelayMs, undefined, { signal: stopping.signal });
      } catch {
        return answer;
      }
    }
    if (!stream) {
      sendJson(res, 200, messageJson(resolved));
      return { ...answer, completed: true };
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'request-id': `req_scripted_${resolved.meta.messageId}`,
    });
    const delay = reply.chunkDelayMs ?? defaultDelay;
    for (const event of sseEvents(resolved, reply.chunkSize ?? chunkSize)) {
      if (event.delta && delay > 0) {
        try {
          await sleep(delay, undefined, { signal: stopping.signal });
        } catch {
          break;
        }
      }
      if (res.destroyed || res.writableEnded) return answer;
      res.write(encodeSse(event));
    }
    if (res.destroyed) return answer;
    res.end();
    return { ...answer, completed: !stopping.signal.aborted };
  }

  async function handleMessages(req: IncomingMessage, res: ServerResponse, recorded: RecordedRequest) {
    const body = recorded.body as { messages: readonly unknown[]; stream?: boolean; model?: string };
    const view = viewRequest(body);
    if (view === undefined) {
      recorded.answer = { type: 'error', status: 400, errorType: 'invalid_request_error' };
      sendJson(res, 400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'messages: expected a list of messages' },
      });
      return;
    }
    const key = turnKey(view, body);
    const failed = failures.get(key) ?? 0;
    const step = view.kind === 'side' ? 0 : view.repliesSoFar + failed;
    const ctx: TurnContext = {
      ...view,
      step,
      lastToolResults: view.toolResults,
    };
    (recorded as { view?: RecordedRequest['view'] }).view = { ...view, step };
    const chosen = chooseStep(ctx);
    switch (chosen.type) {
      case 'reply': {
        const inputTokens = Math.max(1, Math.ceil(JSON.stringify(body).length / 4));
        recorded.answer = await streamReply(res, chosen, view.model, inputTokens, body.stream === true);
        return;
      }
      case 'error': {
        failures.set(key, failed + 1);
        const errorType = chosen.errorType ?? errorTypeFor(chosen.status);
        recorded.answer = { type: 'error', status: chosen.status, errorType };
        const headers: Record<string, string> = { 'x-should-retry': String(chosen.status >= 429) };
        if (chosen.retryAfterSeconds !== undefined) headers['retry-after'] = String(chosen.retryAfterSeconds);
        Object.assign(headers, chosen.headers);
        sendJson(
          res,
          chosen.status,
          { type: 'error', error: { type: errorType, message: chosen.message ?? `Scripted ${errorType}` } },
          headers,
        );
        return;
      }
      case 'hang': {
        failures.set(key, failed + 1);
        recorded.answer = { type: 'hang' };
        // Left open on purpose; `stop()` ends it, or the client closes it.
        req.socket.setTimeout(0);
        return;
      }
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: unknown;
    if (raw !== '') {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }
    const headers: Record<string, string | string[] | undefined> = { ...req.headers };
    delete headers['x-api-key'];
    delete headers.authorization;
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const path = url.split('?')[0] ?? '/';
    const recorded: RecordedRequest = { index: requests.length, at: Date.now(), method, url, headers, body };
    record(recorded);

    if (method === 'POST' && path === '/v1/messages') {
      if (typeof body !== 'object' || body === null) {
        recorded.answer = { type: 'error', status: 400, errorType: 'invalid_request_error' };
        sendJson(res, 400, {
          type: 'error',
          error: { type: 'invalid_request_error', message: 'body: expected JSON' },
        });
        return;
      }
      await handleMessages(req, res, recorded);
      return;
    }
    if (method === 'POST' && path === '/v1/messages/count_tokens') {
      recorded.answer = { type: 'other', status: 200 };
      sendJson(res, 200, { input_tokens: Math.max(1, Math.ceil(raw.length / 4)) });
      return;
    }
    if (method === 'GET' && path === '/v1/models') {
      recorded.answer = { type: 'other', status: 200 };
      const ids = ['claude-opus-5-5', 'claude-sonnet-4-5', 'claude-haiku-4-5'];
      sendJson(res, 200, {
        data: ids.map((id) => ({ type: 'model', id, display_name: id, created_at: '2026-01-01T00:00:00Z' })),
        has_more: false,
        first_id: ids[0],
        last_id: ids.at(-1),
      });
      return;
    }
    recorded.answer = { type: 'other', status: 404 };
    sendJson(res, 404, {
      type: 'error',
      error: { type: 'not_found_error', message: `${method} ${path}: not scripted` },
    });
  }

  return {
    get requests() {
      return requests;
    },
    get baseUrl() {
      return baseUrl;
    },
    messageRequests() {
      return requests.filter((r) => r.method === 'POST' && r.url.split('?')[0] === '/v1/messages');
    },
    setScript(next) {
      script = toScript(next);
    },
    start() {
      if (server !== undefined)
        throw new Error('scripted model: start() was already called; create another one');
      const srv = createServer((req, res) => {
        handle(req, res)
          .finally(notify)
          .catch((err: unknown) => {
            if (!res.headersSent)
              sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: String(err) } });
            else res.destroy();
          });
      });
      server = srv;
      return new Promise((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
          srv.off('error', reject);
          const { address, port } = srv.address() as AddressInfo;
          baseUrl = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
          resolve({ baseUrl });
        });
      });
    },
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        stopping.abort();
        for (const w of [...waiters]) w();
        if (server === undefined || !server.listening) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopped;
    },
    waitForRequest(predicate = () => true, { since = 0, timeoutMs = 30_000, signal } = {}) {
      return new Promise((resolve, reject) => {
        const done = () => {
          waiters.delete(check);
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        };
        const check = () => {
          const found = requests.slice(since).find(predicate);
          if (found !== undefined) {
            done();
            resolve(found);
          } else if (stopping.signal.aborted) {
            done();
            reject(new Error('scripted model: stopped while waiting for a request'));
          }
        };
        const onAbort = () => {
          done();
          reject(signal?.reason ?? new Error('aborted'));
        };
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(`scripted model: no matching request within ${timeoutMs} ms (${requests.length} seen)`),
          );
        }, timeoutMs);
        signal?.addEventListener('abort', onAbort, { once: true });
        waiters.add(check);
        check();
      });
    },
  };
}
