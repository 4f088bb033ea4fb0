/**
 * A local stand-in for an OpenAI-compatible speech-to-text server: `POST {url}/audio/transcriptions`
 * with a multipart body (`file`, `model`, optional `language`, `response_format`), answered with
 * `{ "text": … }`. It records what each request carried (the file's bytes, the model, the
 * `Authorization` header), so a test can check that what reached the transcriber is the user's note
 * under the configured model and key; and it can be made slow, or to refuse, to play a server in trouble.
 *
 * What it hears: {@link sandboxTranscript} of the file by default (the text after a `switchyard-says:`
 * marker in the bytes, else a sentence naming the file's size), or a text the caller gives.
 *
 * Binds 127.0.0.1 only. `stop()` ends every open connection and pending slow answer, leaving no timer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One transcription request as the stand-in received it. */
export interface TranscriptionRequestRecord {
  /** The `model` field. */
  model: string | undefined;
  /** The `language` field, when sent. */
  language: string | undefined;
  /** The `response_format` field, when sent. */
  responseFormat: string | undefined;
  /** The `Authorization` header as sent (`Bearer …`), when sent. */
  authorization: string | undefined;
  /** The uploaded file's name and type as the multipart part declared them. */
  fileName: string | undefined;
  mimeType: string | undefined;
  /** The uploaded file's bytes. */
  bytes: Uint8Array;
}

/** The file a transcript is derived from. */
export interface HeardFile {
  bytes: Uint8Array;
  fileName: string | undefined;
  mimeType: string | undefined;
}

/** How the stand-in behaves; each can be changed later on the handle. */
export interface TranscriptionServerOptions {
  /** What is heard: a fixed text, or one made from the file; default {@link sandboxTranscript}. */
  text?: string | ((file: HeardFile) => string);
  /** Answers only after this many ms (a slow server); default 0. */
  delayMs?: number;
  /** A key the server demands as `Authorization: Bearer KEY` (401 otherwise); default none asked. */
  key?: string;
  /** Port to listen on; default a free one. */
  port?: number;
}

/** A running (or not yet started) stand-in. */
export interface TranscriptionServer {
  /** Listens on 127.0.0.1; resolves with the base URL to configure (`http://127.0.0.1:PORT/v1`). */
  start(): Promise<{ url: string }>;
  /** Closes the server and every connection, dropping answers still delayed. */
  stop(): Promise<void>;
  /** Every request received, oldest first (copies). */
  requests(): TranscriptionRequestRecord[];
  /** Makes later answers wait `ms` (0: at once). */
  setDelay(ms: number): void;
  /** Answers the next `times` requests (default 1) with an HTTP error and an OpenAI-shaped body. */
  failNext(status: number, message: string, times?: number): void;
}

/** The marker a test or demo file carries to choose what the stand-in hears. */
export const SAYS_MARKER = 'switchyard-says:';

/**
 * What the stand-in hears in a file by default: the UTF-8 text after {@link SAYS_MARKER} up to the next
 * newline or NUL (so a test can make a fake OGG that "says" something), else a sentence that names the
 * file's size, so any real recording uploaded in the sandbox gets a visible transcript.
 */
export function sandboxTranscript(file: HeardFile): string {
  const text = Buffer.from(file.bytes).toString('latin1');
  const at = text.indexOf(SAYS_MARKER);
  if (at >= 0) {
    const rest = Buffer.from(file.bytes.subarray(at + SAYS_MARKER.length)).toString('utf8');
    const said = rest.split(/[\n\0]/, 1)[0]?.trim() ?? '';
    if (said !== '') return said;
  }
  return `This is the sandbox transcriber: it heard a recording of ${file.bytes.byteLength} bytes.`;
}

/** Creates the stand-in; nothing listens until `start`. */
export function createTranscriptionServer(options: TranscriptionServerOptions = {}): TranscriptionServer {
  const received: TranscriptionRequestRecord[] = [];
  const failures: { status: number; message: string }[] = [];
  const pending = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  let delayMs = options.delayMs ?? 0;
  let server: Server | undefined;

  const hear = (file: HeardFile): string =>
    typeof options.text === 'string' ? options.text : (options.text ?? sandboxTranscript)(file);

  const wait = (ms: number): Promise<void> =>
    ms <= 0
      ? Promise.resolve()
      : new Promise((resolve) => {
          const entry = {
            resolve,
            timer: setTimeout(() => {
              pending.delete(entry);
              resolve();
            }, ms),
          };
          pending.add(entry);
        });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const answer = (status: number, body: unknown): void => {
      if (res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'POST' || !url.pathname.endsWith('/audio/transcriptions')) {
      answer(404, {
        error: { message: `no route ${req.method} ${url.pathname}`, type: 'invalid_request_error' },
      });
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let form: FormData;
    try {
      form = await new Response(body, {
        headers: { 'content-type': req.headers['content-type'] ?? '' },
      }).formData();
    } catch {
      answer(400, {
        error: { message: 'expected a multipart/form-data body', type: 'invalid_request_error' },
      });
      return;
    }
    const file = form.get('file');
    const field = (name: string): string | undefined => {
      const value = form.get(name);
      return typeof value === 'string' ? value : undefined;
    };
    const bytes = file instanceof Blob ? new Uint8Array(await file.arrayBuffer()) : new Uint8Array();
    const record: TranscriptionRequestRecord = {
      model: field('model'),
      language: field('language'),
      responseFormat: field('response_format'),
      authorization: req.headers.authorization,
      fileName: file instanceof File ? file.name : undefined,
      mimeType: file instanceof Blob && file.type !== '' ? file.type : undefined,
      bytes,
    };
    received.push(record);
    await wait(delayMs);
    const failure = failures.shift();
    if (failure) {
      answer(failure.status, { error: { message: failure.message, type: 'server_error' } });
      return;
    }
    if (options.key !== undefined && record.authorization !== `Bearer ${options.key}`) {
      answer(401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error' } });
      return;
    }
    if (!(file instanceof Blob) || record.model === undefined) {
      answer(400, { error: { message: 'file and model are required', type: 'invalid_request_error' } });
      return;
    }
    answer(200, { text: hear({ bytes, fileName: record.fileName, mimeType: record.mimeType }) });
  };

  return {
    start() {
      const listening = createServer((req, res) => {
        handle(req, res).catch(() => res.destroy());
      });
      server = listening;
      return new Promise((resolve, reject) => {
        listening.once('error', reject);
        listening.listen(options.port ?? 0, '127.0.0.1', () => {
          const { port } = listening.address() as AddressInfo;
          resolve({ url: `http://127.0.0.1:${port}/v1` });
        });
      });
    },
    async stop() {
      for (const entry of pending) {
        clearTimeout(entry.timer);
        entry.resolve();
      }
      pending.clear();
      const closing = server;
      server = undefined;
      if (!closing) return;
      closing.closeAllConnections();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
    requests: () => received.map((r) => ({ ...r, bytes: new Uint8Array(r.bytes) })),
    setDelay(ms) {
      delayMs = ms;
    },
    failNext(status, message, times = 1) {
      for (let i = 0; i < times; i++) failures.push({ status, message });
    },
  };
}
