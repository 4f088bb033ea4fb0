/**
 * The web chat view: a page served by the sandbox server that shows each chat as a Telegram client
 * would (live edits over server-sent events, rendered HTML, the pinned bar, pressable inline keyboards,
 * forum topics as tabs) and lets a developer type, upload files and press buttons as the user.
 *
 * Routes, all under the server's own origin: `GET /` (the page), `GET /web/static/<file>`,
 * `GET /web/api/state`, `GET /web/api/events` (SSE), `GET /web/api/file/<file_id>`, and
 * `POST /web/api/{send,upload,press,stop,chats}` (`stop` presses the live draft's stop button). Every
 * one of them is refused (403, saying why) unless `view-access.ts` lets the request through: a loopback
 * Host and Origin on the sandbox's port, and the run's secret. POSTs must also carry an `x-sandbox-view`
 * header, which a page on another origin cannot send without a CORS preflight this server never grants.
 *
 * The page is plain HTML/CSS/JS read from `static/` beside this module (or from `src/` when running
 * the compiled package), so there is no build step.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { SandboxEvent } from '../events.js';
import { TEXT_LIMITS } from '../message-content.js';
import type { SandboxChat } from '../records.js';
import { parseMultipart } from '../request-params.js';
import type { ChatView, TelegramServer } from '../server-options.js';
import { checkViewAccess, viewCookieName } from './view-access.js';

/** What the view needs from the server: its control handle and stored files. */
export interface WebViewHost {
  readonly server: Pick<
    TelegramServer,
    | 'botUser'
    | 'defaultUser'
    | 'chats'
    | 'chat'
    | 'privateChat'
    | 'createGroup'
    | 'createTopic'
    | 'sendText'
    | 'sendPhoto'
    | 'sendDocument'
    | 'sendVoice'
    | 'pressButton'
    | 'stopDraft'
    | 'subscribe'
  >;
  /** A stored file's bytes, by `file_id`. */
  file(fileId: string): { bytes: Uint8Array; mimeType?: string; fileName?: string } | undefined;
  /** A line shown at the top of the page (e.g. "scripted model"), or undefined. */
  banner(): string | undefined;
  /** This run's secret, which every request to the view must carry (see `view-access.ts`). */
  readonly secret: string;
}

/** The view's request handler and its shutdown. */
export interface WebView {
  /** Serves the request if it is the view's; false when the path is not the view's. */
  handle(req: IncomingMessage, res: ServerResponse, url: URL): boolean;
  /** Ends every event stream and its heartbeat. */
  close(): void;
}

const STATIC_TYPES = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
} as const satisfies Record<string, string>;

type StaticName = keyof typeof STATIC_TYPES;

/**
 * A user's text over Telegram's limit (`TEXT_LIMITS`, in characters) is refused: its clients never send
 * more, so neither does the view (the page says so before it asks; this holds any other caller).
 */
function refuseTooLong(text: string, what: 'message' | 'caption'): void {
  const limit = TEXT_LIMITS[what];
  if (text.length > limit)
    throw new Error(`Telegram takes at most ${limit} characters in a ${what}; this one has ${text.length}`);
}

/** Events the page does not need (request accounting). */
const HIDDEN_EVENTS = new Set<SandboxEvent['type']>(['api_call', 'updates_delivered']);

function staticDirectory(): string {
  const beside = fileURLToPath(new URL('./static/', import.meta.url));
  if (existsSync(beside)) return beside;
  // Compiled to dist/telegram/web/: the page's files stay in src/.
  return fileURLToPath(new URL('../../../src/telegram/web/static/', import.meta.url));
}

/** Creates the view for a server; it serves nothing until the server routes requests to it. */
export function createWebView(host: WebViewHost): WebView {
  const directory = staticDirectory();
  const streams = new Set<{ res: ServerResponse; heartbeat: NodeJS.Timeout; unsubscribe: () => void }>();

  function serveStatic(res: ServerResponse, name: StaticName, headers: Record<string, string> = {}): void {
    const body = readFileSync(`${directory}${name}`);
    res.writeHead(200, { 'content-type': STATIC_TYPES[name], 'cache-control': 'no-store', ...headers });
    res.end(body);
  }

  function state(): unknown {
    // A fresh sandbox has no chats; the page needs one to type in, so the default user's is opened.
    if (host.server.chats().length === 0) host.server.privateChat();
    const chats: ChatView[] = host.server.chats().map((c: SandboxChat) => host.server.chat(c.id));
    return { bot: host.server.botUser, user: host.server.defaultUser, banner: host.banner() ?? null, chats };
  }

  function openStream(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    res.write(': connected\n\n');
    const unsubscribe = host.server.subscribe((event) => {
      if (!HIDDEN_EVENTS.has(event.type)) res.write(`data: ${JSON.stringify(event)}\n\n`);
    });
    const stream = { res, unsubscribe, heartbeat: setInterval(() => res.write(': ping\n\n'), 15_000) };
    streams.add(stream);
    req.on('close', () => {
      clearInterval(stream.heartbeat);
      stream.unsubscribe();
      streams.delete(stream);
    });
  }

  async function post(req: IncomingMessage, res: ServerResponse, action: string): Promise<void> {
    if (req.headers['x-sandbox-view'] === undefined) {
      json(res, 403, { error: 'send the x-sandbox-view header (the page does)' });
      return;
    }
    const body = await readAll(req);
    try {
      json(res, 200, perform(action, req.headers['content-type'] ?? '', body));
    } catch (err) {
      json(res, 400, { error: err instanceof Error ? err.message : String(err) });
    }
  }

  function perform(action: string, contentType: string, body: Buffer): unknown {
    if (action === 'upload') {
      const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
      const parts = parseMultipart(body, boundary?.[1] ?? boundary?.[2] ?? '');
      const field = (name: string) =>
        parts.find((p) => p.name === name && p.filename === undefined)?.data.toString();
      const file = parts.find((p) => p.filename !== undefined);
      if (!file) throw new Error('no file in the upload');
      const chatId = Number(field('chatId'));
      const caption = field('caption') ?? '';
      refuseTooLong(caption, 'caption');
      const threadId = optionalNumber(field('threadId'));
      const common = {
        data: file.data,
        ...(caption.trim() !== '' ? { caption } : {}),
        ...(threadId !== undefined ? { threadId } : {}),
      };
      if (file.contentType?.startsWith('image/') && /\.(jpe?g|png|webp)$/i.test(file.filename ?? '')) {
        return host.server.sendPhoto(chatId, common);
      }
      // An audio file goes as a voice note (the page measures its duration; else it is estimated).
      if (field('voice') === '1' || file.contentType?.startsWith('audio/')) {
        const measured = Number(field('duration'));
        return host.server.sendVoice(chatId, {
          ...common,
          duration:
            Number.isFinite(measured) && measured > 0 ? Math.round(measured) : estimatedSeconds(file.data),
          mimeType: file.contentType?.startsWith('audio/') ? file.contentType : 'audio/ogg',
        });
      }
      return host.server.sendDocument(chatId, {
        ...common,
        fileName: file.filename || 'file',
        ...(file.contentType !== undefined ? { mimeType: file.contentType } : {}),
      });
    }
    const input = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
    const chatId = Number(input.chatId);
    const threadId = optionalNumber(input.threadId);
    switch (action) {
      case 'send': {
        const replyTo = optionalNumber(input.replyTo);
        const text = String(input.text ?? '');
        refuseTooLong(text, 'message');
        return host.server.sendText(chatId, text, {
          ...(threadId !== undefined ? { threadId } : {}),
          ...(replyTo !== undefined ? { replyTo } : {}),
        });
      }
      case 'press':
        return host.server.pressButton(chatId, Number(input.messageId), String(input.data ?? ''));
      case 'stop':
        return host.server.stopDraft(chatId);
      case 'chats': {
        const forum = input.kind === 'forum';
        // A new forum has only its General topic, as in Telegram; topics are opened with "+ Topic".
        const chat = host.server.createGroup({
          title: String(input.title || (forum ? 'Sandbox forum' : 'Sandbox group')),
          supergroup: true,
          forum,
        });
        return chat;
      }
      case 'topics':
        return host.server.createTopic(chatId, String(input.name || 'New topic'));
      default:
        throw new Error(`unknown action ${action}`);
    }
  }

  return {
    handle(req, res, url) {
      const path = url.pathname;
      if (path !== '/' && path !== '/web' && !path.startsWith('/web/')) return false;
      const port = req.socket.localPort ?? 0;
      const header = req.headers['x-sandbox-view'];
      const access = checkViewAccess(
        {
          host: req.headers.host,
          origin: req.headers.origin,
          cookie: req.headers.cookie,
          header: typeof header === 'string' ? header : undefined,
          key: url.searchParams.get('k'),
        },
        port,
        host.secret,
      );
      if (!access.ok) {
        json(res, 403, { error: access.reason });
        return true;
      }
      if (req.method === 'GET' && (path === '/' || path === '/web' || path === '/web/')) {
        // The page's own requests then carry the secret as a cookie no other site's request gets.
        const cookie = `${viewCookieName(port)}=${host.secret}; HttpOnly; SameSite=Strict; Path=/`;
        serveStatic(res, 'index.html', access.setCookie ? { 'set-cookie': cookie } : {});
        return true;
      }
      const asset = /^\/web\/static\/([a-z.]+)$/.exec(path)?.[1];
      if (req.method === 'GET' && asset !== undefined && asset in STATIC_TYPES) {
        serveStatic(res, asset as StaticName);
        return true;
      }
      if (req.method === 'GET' && path === '/web/api/state') {
        json(res, 200, state());
        return true;
      }
      if (req.method === 'GET' && path === '/web/api/events') {
        openStream(req, res);
        return true;
      }
      const fileId = /^\/web\/api\/file\/([^/]+)$/.exec(path)?.[1];
      if (req.method === 'GET' && fileId !== undefined) {
        const file = host.file(decodeURIComponent(fileId));
        if (!file) json(res, 404, { error: 'no such file' });
        else {
          res.writeHead(200, { 'content-type': file.mimeType ?? guessType(file.fileName) });
          res.end(file.bytes);
        }
        return true;
      }
      const action = /^\/web\/api\/(send|upload|press|stop|chats|topics)$/.exec(path)?.[1];
      if (req.method === 'POST' && action !== undefined) {
        post(req, res, action).catch((err: unknown) => json(res, 500, { error: String(err) }));
        return true;
      }
      return false;
    },
    close() {
      for (const stream of streams) {
        clearInterval(stream.heartbeat);
        stream.unsubscribe();
        stream.res.end();
      }
      streams.clear();
    },
  };
}

function optionalNumber(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

function guessType(fileName: string | undefined): string {
  if (/\.png$/i.test(fileName ?? '')) return 'image/png';
  if (/\.webp$/i.test(fileName ?? '')) return 'image/webp';
  if (/\.(jpe?g)$/i.test(fileName ?? '') || fileName === undefined) return 'image/jpeg';
  return 'application/octet-stream';
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

/** A recording's length guessed from its size, at Telegram's voice bitrate (about 16 kbit/s); at least 1 s. */
function estimatedSeconds(data: Uint8Array): number {
  return Math.max(1, Math.round(data.byteLength / 2000));
}
