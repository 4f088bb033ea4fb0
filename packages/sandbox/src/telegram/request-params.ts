/**
 * A Bot API request's parameters, from any of the encodings Telegram accepts: the query string, JSON,
 * `application/x-www-form-urlencoded` and `multipart/form-data` (where every value is a string, objects
 * are JSON text, and uploads are file parts referenced as `attach://<name>` or named after the field).
 * Accessors coerce the way Telegram does and throw {@link BotApiError} on unusable values.
 */
import { BotApiError, invalidParameter, missingParameter } from './api-error.js';

/** An uploaded file part. */
export interface UploadedFile {
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** One part of a multipart body. */
interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** Splits a `multipart/form-data` body; tolerant of the unquoted `filename=` grammY writes. */
export function parseMultipart(body: Buffer, boundary: string): Part[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Part[] = [];
  let start = body.indexOf(delimiter);
  while (start >= 0) {
    let partStart = start + delimiter.length;
    if (body.subarray(partStart, partStart + 2).toString() === '--') break;
    if (body.subarray(partStart, partStart + 2).toString() === '\r\n') partStart += 2;
    const next = body.indexOf(delimiter, partStart);
    if (next < 0) break;
    let partEnd = next;
    if (body.subarray(partEnd - 2, partEnd).toString() === '\r\n') partEnd -= 2;
    const part = body.subarray(partStart, partEnd);
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd >= 0) {
      const headers = part.subarray(0, headerEnd).toString('utf8');
      const disposition = /content-disposition:\s*form-data(.*)/i.exec(headers)?.[1] ?? '';
      const name = headerValue(disposition, 'name');
      if (name !== undefined) {
        const filename = headerValue(disposition, 'filename');
        const contentType = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1]?.trim();
        parts.push({
          name,
          data: Buffer.from(part.subarray(headerEnd + 4)),
          ...(filename !== undefined ? { filename } : {}),
          ...(contentType !== undefined ? { contentType } : {}),
        });
      }
    }
    start = next;
  }
  return parts;
}

function headerValue(disposition: string, key: string): string | undefined {
  const match = new RegExp(`;\\s*${key}=(?:"([^"]*)"|([^;\\r\\n]*))`, 'i').exec(disposition);
  if (!match) return undefined;
  return (match[1] ?? match[2] ?? '').trim();
}

/** The parameters of one request, with Telegram's coercions. */
export class RequestParams {
  readonly #values: Record<string, unknown>;
  readonly #files: Map<string, UploadedFile>;

  constructor(values: Record<string, unknown>, files: Map<string, UploadedFile> = new Map()) {
    this.#values = values;
    this.#files = files;
  }

  /**
   * Reads the parameters of a request from its query string and body. A body that cannot be parsed
   * yields a 400 like Telegram's.
   */
  static parse(contentType: string | undefined, body: Buffer, query: URLSearchParams): RequestParams {
    const values: Record<string, unknown> = Object.fromEntries(query);
    const files = new Map<string, UploadedFile>();
    const type = (contentType ?? '').toLowerCase();
    if (body.length > 0 && type.startsWith('application/json')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        throw new BotApiError(400, "Bad Request: can't parse JSON object");
      }
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
        Object.assign(values, parsed);
    } else if (body.length > 0 && type.startsWith('application/x-www-form-urlencoded')) {
      Object.assign(values, Object.fromEntries(new URLSearchParams(body.toString('utf8'))));
    } else if (type.startsWith('multipart/form-data')) {
      const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
      const b = boundary?.[1] ?? boundary?.[2];
      if (!b) throw new BotApiError(400, 'Bad Request: multipart boundary is missing');
      for (const part of parseMultipart(body, b)) {
        if (part.filename !== undefined) {
          files.set(part.name, {
            data: part.data,
            filename: part.filename,
            ...(part.contentType !== undefined ? { contentType: part.contentType } : {}),
          });
        } else {
          values[part.name] = part.data.toString('utf8');
        }
      }
    }
    return new RequestParams(values, files);
  }

  /** Whether a parameter was given (null counts as absent). */
  has(name: string): boolean {
    const v = this.#values[name];
    return v !== undefined && v !== null && v !== '';
  }

  /** A raw value, for logging the chat id of any request. */
  raw(name: string): unknown {
    return this.#values[name];
  }

  /** A required integer. */
  int(name: string): number {
    const value = this.optInt(name);
    if (value === undefined) throw missingParameter(name);
    return value;
  }

  /** An optional integer; numeric strings are accepted as Telegram does. */
  optInt(name: string): number | undefined {
    if (!this.has(name)) return undefined;
    const v = this.#values[name];
    const n =
      typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : Number.NaN;
    if (!Number.isSafeInteger(n)) throw invalidParameter(name, 'wrong integer value');
    return n;
  }

  /** A required string, or the given refusal when it is missing or empty. */
  str(name: string, whenMissing: BotApiError = missingParameter(name)): string {
    const value = this.optStr(name);
    if (value === undefined) throw whenMissing;
    return value;
  }

  /** An optional string; numbers are stringified. */
  optStr(name: string): string | undefined {
    const v = this.#values[name];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    throw invalidParameter(name, 'wrong string value');
  }

  /** A boolean; absent is false, and "true"/"1" strings count as true. */
  bool(name: string): boolean {
    const v = this.#values[name];
    return v === true || v === 1 || v === 'true' || v === '1' || v === 'True';
  }

  /** A JSON-serialised parameter (an object in JSON bodies, a JSON string otherwise). */
  json(name: string): unknown {
    if (!this.has(name)) return undefined;
    const v = this.#values[name];
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v);
    } catch {
      throw new BotApiError(400, `Bad Request: can't parse ${name} JSON object`);
    }
  }

  /**
   * An InputFile parameter: an uploaded part (by `attach://name` or by the field's own name), or a
   * string (a `file_id` or URL).
   */
  file(name: string): UploadedFile | string | undefined {
    const v = this.optStr(name);
    if (v?.startsWith('attach://')) return this.#files.get(v.slice('attach://'.length));
    return this.#files.get(name) ?? v;
  }

  /** A file named inside a JSON parameter (an album's `media`): `attach://<part>`, or a `file_id`. */
  attached(ref: string): UploadedFile | string | undefined {
    return ref.startsWith('attach://') ? this.#files.get(ref.slice('attach://'.length)) : ref;
  }
}
