/**
 * Photos and documents a user sends are saved in the agent's exchange directory (`exchange.ts` in the
 * protocol package: readable by the agent's user, written whole with an exact mode) with generated names
 * (never the sender's file name, which could be `../../etc/passwd`), and passed to the agent by path.
 * The Bot API serves downloads up to 20 MB; larger files get a clear reply instead.
 */
import { randomBytes } from 'node:crypto';
import { extname } from 'node:path';
import {
  type Attachment,
  type Clock,
  type ExchangeOptions,
  systemClock,
  writeExchangeFile,
} from '@switchyard/protocol';
import type { Message } from 'grammy/types';
import { type BotApi, errorText } from '../telegram/bot-api.js';

/** The Bot API's download limit. */
export const DOWNLOAD_LIMIT_BYTES = 20 * 1024 * 1024;

/** Said when a file is over the download limit. */
export const TOO_BIG =
  'That file is larger than 20 MB, the most a bot can download. Please send a smaller one.';

/** Where and how files are fetched. */
export interface AttachmentOptions {
  api: Pick<BotApi, 'getFile'>;
  /** Builds the download URL for a `file_path` (it embeds the token; never log it). */
  fileUrl(filePath: string): string;
  /** Where the files are saved for the agent; prepared (`prepareExchange`) before the first message. */
  exchange: ExchangeOptions;
  signal?: AbortSignal;
  /** Time for the download deadline and the saved files' names; default the system clock. */
  clock?: Clock;
}

/** Saved files, or the reason one could not be saved (said to the user as is). */
export type SaveResult = { ok: true; attachments: Attachment[] } | { ok: false; reply: string };

const MIME_EXT: Record<string, string> = {
  'image/jpeg': '.jpg',
  'image/png': '.png',
  'application/pdf': '.pdf',
  'text/plain': '.txt',
};

/** A file extension that is safe to keep: short, alphanumeric, from the name or the MIME type. */
export function safeExtension(name: string | undefined, mime: string | undefined): string {
  const ext = name ? extname(name).toLowerCase() : '';
  if (/^\.[a-z0-9]{1,8}$/.test(ext)) return ext;
  return (mime && MIME_EXT[mime]) ?? '.bin';
}

/** Downloads the message's photo (largest size) or document, if any. */
export async function saveAttachments(message: Message, options: AttachmentOptions): Promise<SaveResult> {
  const photo = message.photo?.[message.photo.length - 1];
  const doc = message.document;
  const file = photo
    ? {
        kind: 'photo' as const,
        id: photo.file_id,
        size: photo.file_size,
        name: undefined,
        mime: 'image/jpeg',
      }
    : doc
      ? {
          kind: 'document' as const,
          id: doc.file_id,
          size: doc.file_size,
          name: doc.file_name,
          mime: doc.mime_type,
        }
      : undefined;
  if (!file) return { ok: true, attachments: [] };
  if (file.size !== undefined && file.size > DOWNLOAD_LIMIT_BYTES) {
    return { ok: false, reply: TOO_BIG };
  }
  try {
    return { ok: true, attachments: [await download(file, options)] };
  } catch (error) {
    // Expected failures (Telegram refusing the file, the network) are the user's to hear about; the
    // update must still be handled, never left to fail again on every replay.
    if (/file is too big/i.test(errorText(error))) return { ok: false, reply: TOO_BIG };
    return { ok: false, reply: 'Downloading that file failed. Please send it again.' };
  }
}

/** How long one download may take before it is abandoned. */
const DOWNLOAD_TIMEOUT_MS = 120_000;

/** Downloads one file by `file_id` into the exchange directory (throws on failure; see `saveAttachments`). */
export async function download(
  file: { kind: 'photo' | 'document'; id: string; name: string | undefined; mime: string | undefined },
  options: AttachmentOptions,
): Promise<Attachment> {
  const info = await options.api.getFile(file.id);
  if (!info.file_path) throw new Error('getFile returned no file_path');
  const clock = options.clock ?? systemClock;
  const deadline = new AbortController();
  const timer = clock.setTimeout(
    () => deadline.abort(new DOMException('the download timed out', 'TimeoutError')),
    DOWNLOAD_TIMEOUT_MS,
  );
  let body: Buffer;
  try {
    const response = await fetch(options.fileUrl(info.file_path), {
      signal: options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal,
    });
    if (!response.ok) throw new Error(`download failed: HTTP ${response.status}`);
    body = Buffer.from(await response.arrayBuffer());
  } finally {
    clock.clearTimeout(timer);
  }
  if (body.length > DOWNLOAD_LIMIT_BYTES) throw new Error('file is too big');
  const name = `in-${clock.now()}-${randomBytes(6).toString('hex')}${safeExtension(file.name, file.mime)}`;
  const path = await writeExchangeFile(options.exchange, name, body);
  const attachment: Attachment = { kind: file.kind, path, size: body.length };
  if (file.name) attachment.name = file.name.slice(0, 500);
  if (file.mime) attachment.mime = file.mime;
  return attachment;
}
