/**
 * The sandbox's Bot API over HTTP: `POST|GET /bot<token>/<method>` (JSON, form or multipart bodies) and
 * `GET /file/bot<token>/<file_path>`, with the planned faults (an error answer, a dropped connection, a
 * stalled poll) applied and every call logged; any other path is the web view's, or a 404.
 *
 * Both routes answer only requests addressed to this machine's loopback on the sandbox's port and sent by
 * no page but the sandbox's own (`loopback.ts`), with the run's token: a refused one gets a 403 and is
 * not logged as a Bot API call.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BotApiError, refuse } from './api-error.js';
import { callMethod, canonicalMethod } from './bot-api.js';
import type { ChatStore } from './chat-store.js';
import type { EventHub } from './events.js';
import type { Fault, FaultPlan } from './fault-plan.js';
import { checkLoopbackPlace } from './loopback.js';
import type { MethodContext } from './method-context.js';
import { RequestParams } from './request-params.js';
import type { ApiCallLog, ApiCallRecord } from './stats.js';
import type { WebView } from './web/web-view.js';

/** What the routes use of the server: its state, its fault plan and its call log. */
export interface RouteContext {
  readonly token: string;
  readonly store: ChatStore;
  readonly hub: EventHub;
  readonly log: ApiCallLog;
  readonly faults: FaultPlan;
  /** The calls being carried out, so that `stop()` can abort them. */
  readonly inFlight: Set<AbortController>;
  readonly now: () => number;
  /** Request bodies above this are refused with 413. */
  readonly maxRequestBytes: number | undefined;
  /** What a method handler gets for a call whose client signal is `signal`. */
  readonly methodContext: (signal: AbortSignal) => MethodContext;
  /** The web view, when it is on: it answers every path that is not the Bot API's. */
  readonly web: () => WebView | undefined;
}

/** The request listener of the sandbox's HTTP server. */
export function createRoutes(ctx: RouteContext): (req: IncomingMessage, res: ServerResponse) => void {
  const { token, store, hub, log, faults, inFlight, now, methodContext } = ctx;

  /** Waits out a stalled `getUpdates`; the call proceeds after (or ends with the client). */
  const waitOutStall = async (signal: AbortSignal): Promise<void> => {
    for (let left = faults.stalledFor(); left > 0 && !signal.aborted; left = faults.stalledFor())
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        function done(): void {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      });
  };

  async function handleApi(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    method: string,
  ): Promise<void> {
    const at = now();
    const canonical = canonicalMethod(method);
    const name = canonical ?? method;
    log.arrived(name);
    const controller = new AbortController();
    inFlight.add(controller);
    res.on('close', () => controller.abort());
    let params: RequestParams | undefined;
    let body: unknown;
    let fault: Fault | undefined;
    try {
      params = RequestParams.parse(
        req.headers['content-type'],
        await readBody(req, ctx.maxRequestBytes),
        url.searchParams,
      );
      const raw = Number(params.raw('chat_id'));
      fault = faults.take(name, Number.isSafeInteger(raw) ? raw : undefined);
      if (fault?.kind === 'fail')
        body = new BotApiError(
          fault.failure.errorCode ?? 400,
          fault.failure.description,
          fault.failure.retryAfter,
        ).toWire();
      else if (fault?.kind === 'drop' && !fault.afterCall) body = undefined;
      else {
        if (name === 'getUpdates') await waitOutStall(controller.signal);
        body = canonical
          ? await callMethod(canonical, params, methodContext(controller.signal))
          : refuse('notFound').toWire();
      }
    } catch (err) {
      body =
        err instanceof BotApiError ? err.toWire() : { ok: false, error_code: 500, description: String(err) };
    } finally {
      inFlight.delete(controller);
    }
    if (fault?.kind === 'drop') {
      const dropped: ApiCallRecord = {
        method: name,
        ok: false,
        at,
        durationMs: now() - at,
        description: 'connection dropped',
        ...(Number.isSafeInteger(Number(params?.raw('chat_id')))
          ? { chatId: Number(params?.raw('chat_id')) }
          : {}),
      };
      log.record(dropped);
      hub.emit({ type: 'api_call', call: { ...dropped } });
      res.socket?.destroy();
      return;
    }
    const reply = body as { ok: boolean; error_code?: number; description?: string };
    const chatId = Number(params?.raw('chat_id'));
    const call: ApiCallRecord = {
      method: name,
      ok: reply.ok,
      at,
      durationMs: now() - at,
      ...(Number.isSafeInteger(chatId) ? { chatId } : {}),
      ...(reply.error_code !== undefined ? { errorCode: reply.error_code } : {}),
      ...(reply.description !== undefined ? { description: reply.description } : {}),
    };
    log.record(call);
    hub.emit({ type: 'api_call', call: { ...call } });
    sendJson(res, reply.error_code ?? 200, body);
  }

  function handleFile(res: ServerResponse, path: string): void {
    const file = store.files.byPath(decodeURIComponent(path));
    if (!file) {
      sendJson(res, 404, refuse('notFound').toWire());
      return;
    }
    res.writeHead(200, {
      'content-type': file.mimeType ?? 'application/octet-stream',
      'content-length': String(file.bytes.byteLength),
    });
    res.end(file.bytes);
  }

  function route(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const api = /^\/bot([^/]+)\/([^/]+)\/?$/.exec(url.pathname);
    const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    const match = api ?? download;
    if (!match) {
      if (ctx.web()?.handle(req, res, url)) return;
      sendJson(res, 404, refuse('notFound').toWire());
      return;
    }
    // Before the token: a page of another origin, or one whose name was rebound to 127.0.0.1, learns
    // nothing here, not even whether a token it guessed is right.
    const place = checkLoopbackPlace(
      { host: req.headers.host, origin: req.headers.origin },
      req.socket.localPort ?? 0,
      "the sandbox's Bot API",
    );
    if (!place.ok) {
      sendJson(res, 403, { ok: false, error_code: 403, description: `Forbidden: ${place.reason}` });
      return;
    }
    if (match[1] !== token) {
      sendJson(res, 401, refuse('unauthorized').toWire());
      return;
    }
    if (download) {
      handleFile(res, download[2] ?? '');
      return;
    }
    handleApi(req, res, url, api?.[2] ?? '').catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { ok: false, error_code: 500, description: String(err) });
    });
  }

  return route;
}

/** Room for a 50 MB upload (Telegram's limit for bots, checked per file by the methods) and its form fields. */
const MAX_BODY_BYTES = 52 * 1024 * 1024;

async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) throw new BotApiError(413, 'Request Entity Too Large');
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.writableEnded || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}
