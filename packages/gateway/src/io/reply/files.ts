/**
 * Files the agent sends: the bridge's `file_send` uploaded to Telegram (grammY's `InputFile`) in the
 * conversation's chat and topic, as a reply to the turn's opening message, through the courier (so
 * within the chat's send budget), and answered with `file_sent` once Telegram has them.
 *
 * Exactly once:
 * - The row (`store/file-table.ts`) is written before the frame is acknowledged; a restart resumes every
 *   row not finished. A `file_send` sent again for a known `fileId` is answered from the row, never
 *   uploaded twice.
 * - The row's end and the `file_sent` frame (appended to the channel's SQLite outbox) are one
 *   transaction, so the bridge hears the outcome exactly when it is recorded.
 * - The one window left is a crash while the upload call is in flight (`uploading` at boot): Telegram
 *   may or may not have the file, and the Bot API cannot list a chat's messages. The upload is then made
 *   again — a possible duplicate over a possibly lost file — and logged as `file_resent_unknown`.
 *
 * What is uploaded: only files directly in the exchange directory, opened without following a link and
 * read through that open file (`openExchangeFile`), never whatever a path in the frame names: the
 * frame is the agent's word, and this process can read the bot token and every conversation's database.
 * Each file is also checked against the size the bridge recorded: a copy that went missing or changed
 * size is refused (`file_sent` with an error) rather than sent different. The copy is the bridge's own
 * (written once, at call time, and by nothing else), so no checksum is computed on the upload's critical
 * path.
 */
import { createReadStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import {
  type Clock,
  type ExchangeOptions,
  type FrameOf,
  type Logger,
  type OutgoingFile,
  openExchangeFile,
  systemClock,
} from '@switchyard/protocol';
import { InputFile } from 'grammy';
import type { InputMediaDocument, InputMediaPhoto, Message } from 'grammy/types';
import { threadParams } from '../../core/intake/route.js';
import { renderMarkdown } from '../../core/text/markdown.js';
import type { FileSendRow, GatewayStore } from '../../store/store.js';
import { type BotApi, errorCode, errorText, isParseError } from '../telegram/bot-api.js';
import type { Courier } from '../telegram/courier.js';

/** Telegram's caption limit, after entity parsing (the rendered HTML is held to it, so the text is too). */
const CAPTION_LIMIT = 1024;

/** What the file sender needs. */
export interface FileSenderOptions {
  api: Pick<BotApi, 'sendDocument' | 'sendPhoto' | 'sendMediaGroup'>;
  /** The open store. */
  store: Pick<
    GatewayStore,
    | 'addFileSend'
    | 'markFileUploading'
    | 'endFileSend'
    | 'unfinishedFileSends'
    | 'turnOpeningMessage'
    | 'raiseMark'
    | 'atomically'
  >;
  courier: Courier;
  /** The exchange directory: the only place files are uploaded from. */
  exchange: ExchangeOptions;
  /** Sends a reliable frame to the bridge; its append to the outbox is synchronous (and so transactional). */
  send(frame: FrameOf<'file_sent'>): Promise<void>;
  logger: Logger;
  /** Time for the upload durations logged; default the system clock. */
  clock?: Clock;
}

/** The file sender's handle. */
export interface FileSender {
  /** A `file_send` from the bridge: recorded now (before the ack), uploaded in the background. */
  frame(frame: FrameOf<'file_send'>): void;
  /** Uploads what a previous process left unfinished. Call once the gateway is booted. */
  resume(): void;
  /** Resolves when the uploads in flight have ended. */
  stop(): Promise<void>;
}

/** Creates the file sender. */
export function createFileSender(options: FileSenderOptions): FileSender {
  const { api, courier, logger } = options;
  const clock = options.clock ?? systemClock;
  const log = logger.child({ component: 'files' });
  const running = new Map<string, Promise<void>>();

  const finish = (row: FileSendRow, outcome: { messageIds: number[] } | { error: string }): void => {
    const store = options.store;
    store.atomically(() => {
      store.endFileSend(row.fileId, outcome);
      if ('messageIds' in outcome && outcome.messageIds.length > 0)
        store.raiseMark(row.frame.route.chatId, Math.max(...outcome.messageIds));
      void options.send({ type: 'file_sent', fileId: row.fileId, ...answer(outcome) });
    });
  };

  const upload = async (row: FileSendRow): Promise<void> => {
    const { frame } = row;
    const chatId = frame.route.chatId;
    const opened = await openAll(frame.files, options.exchange);
    if (!opened.ok) {
      log.warn({ event: 'file_refused', file: row.fileId, chat: chatId }, opened.problem);
      finish(row, { error: opened.problem });
      return;
    }
    try {
      await uploadOpened(row, opened.files);
    } finally {
      await Promise.all(opened.files.map((file) => file.handle.close()));
    }
  };

  const uploadOpened = async (row: FileSendRow, files: OpenFile[]): Promise<void> => {
    const { frame } = row;
    const chatId = frame.route.chatId;
    if (row.state === 'uploading') {
      log.warn({ event: 'file_resent_unknown', file: row.fileId, chat: chatId }, 'upload outcome unknown');
    }
    const store = options.store;
    const replyTo = frame.turnId === undefined ? undefined : store.turnOpeningMessage(frame.turnId);
    const started = clock.now();
    try {
      const messages = await courier.call(chatId, () => {
        store.markFileUploading(row.fileId);
        return sendFiles(api, frame, files, replyTo);
      });
      if (!messages) throw new Error('the upload was superseded');
      finish(row, { messageIds: messages.map((m) => m.message_id) });
      log.info(
        {
          event: 'file_sent',
          file: row.fileId,
          chat: chatId,
          files: frame.files.length,
          ms: clock.now() - started,
        },
        'files',
      );
    } catch (error) {
      const code = errorCode(error);
      log.warn({ event: 'file_failed', file: row.fileId, chat: chatId, code }, errorText(error));
      finish(row, { error: errorText(error).slice(0, 2000) });
    }
  };

  const start = (row: FileSendRow): void => {
    if (running.has(row.fileId)) return;
    const work = upload(row)
      .catch((error: unknown) => log.error({ event: 'file_upload_crashed', error: errorText(error) }))
      .finally(() => running.delete(row.fileId));
    running.set(row.fileId, work);
  };

  return {
    frame(frame) {
      const known = options.store.addFileSend(frame);
      if (!known) {
        start({ fileId: frame.fileId, frame, state: 'queued', messageIds: [], error: undefined });
        return;
      }
      if (known.state === 'sent' || known.state === 'failed') {
        // The bridge did not hear the outcome (it restarted): tell it again.
        const outcome =
          known.state === 'sent' ? { messageIds: known.messageIds } : { error: known.error ?? '' };
        void options.send({ type: 'file_sent', fileId: frame.fileId, ...answer(outcome) });
      }
      // queued or uploading: already under way in this process, or resumed at boot.
    },
    resume() {
      for (const row of options.store.unfinishedFileSends()) start(row);
    },
    async stop() {
      await Promise.all(running.values());
    },
  };
}

function answer(
  outcome: { messageIds: number[] } | { error: string },
): Omit<FrameOf<'file_sent'>, 'type' | 'fileId'> {
  return 'messageIds' in outcome
    ? { ok: true, messageIds: outcome.messageIds }
    : { ok: false, error: outcome.error || 'unknown error' };
}

/** One file of a `file_send`, open for the upload. */
interface OpenFile {
  file: OutgoingFile;
  handle: FileHandle;
}

/**
 * Opens every file of a send, or none: the reason one cannot be sent as recorded (not in the exchange
 * directory, a link, gone, or of another size than recorded).
 */
async function openAll(
  files: readonly OutgoingFile[],
  exchange: ExchangeOptions,
): Promise<{ ok: true; files: OpenFile[] } | { ok: false; problem: string }> {
  const opened: OpenFile[] = [];
  for (const file of files) {
    const found = await openExchangeFile(exchange, file.path);
    const problem = !found.ok
      ? `the bridge's copy of ${file.name} ${found.problem}; nothing was sent`
      : found.size !== file.size
        ? `the bridge's copy of ${file.name} changed after the call; nothing was sent`
        : undefined;
    if (found.ok && problem === undefined) {
      opened.push({ file, handle: found.handle });
      continue;
    }
    if (found.ok) await found.handle.close();
    await Promise.all(opened.map((o) => o.handle.close()));
    return { ok: false, problem: problem ?? 'unreadable' };
  }
  return { ok: true, files: opened };
}

/** An upload's body read from the open file, from its start each time grammY asks (retries included). */
function inputFile({ file, handle }: OpenFile): InputFile {
  return new InputFile(
    () =>
      createReadStream('', { fd: handle.fd, start: 0, end: Math.max(0, file.size - 1), autoClose: false }),
    file.name,
  );
}

/** The caption as Telegram HTML within the limit, or undefined for none. */
function renderCaption(caption: string | undefined): string | undefined {
  if (!caption) return undefined;
  return renderMarkdown(caption, CAPTION_LIMIT)[0]?.html;
}

/** The caption as plain text within the limit (the fallback when Telegram rejects the HTML). */
function plainCaption(caption: string | undefined): string | undefined {
  if (!caption) return undefined;
  return renderMarkdown(caption, CAPTION_LIMIT)[0]?.text;
}

/** One upload: a single document or photo, or an album; the HTML caption first, then plain text. */
async function sendFiles(
  api: FileSenderOptions['api'],
  frame: FrameOf<'file_send'>,
  files: readonly OpenFile[],
  replyTo: number | undefined,
): Promise<Message[]> {
  const chatId = frame.route.chatId;
  const place = {
    ...threadParams(frame.route),
    ...(replyTo === undefined
      ? {}
      : { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } }),
  };
  const attempt = async (html: boolean): Promise<Message[]> => {
    const caption = html ? renderCaption(frame.caption) : plainCaption(frame.caption);
    const captioned =
      caption === undefined ? {} : { caption, ...(html ? { parse_mode: 'HTML' as const } : {}) };
    const [first] = files;
    if (files.length === 1 && first) {
      const input = inputFile(first);
      return [
        first.file.kind === 'photo'
          ? await api.sendPhoto(chatId, input, { ...place, ...captioned })
          : await api.sendDocument(chatId, input, { ...place, ...captioned }),
      ];
    }
    const media = files.map((open, index) => ({
      type: open.file.kind,
      media: inputFile(open),
      ...(index === 0 ? captioned : {}),
    }));
    return (await api.sendMediaGroup(
      chatId,
      media as InputMediaPhoto[] | InputMediaDocument[],
      place,
    )) as Message[];
  };
  try {
    return await attempt(true);
  } catch (error) {
    if (!isParseError(error) || frame.caption === undefined) throw error;
    return attempt(false);
  }
}
