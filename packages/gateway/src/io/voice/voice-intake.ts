/**
 * A voice note (or an audio file, a video note) at intake: downloaded into the exchange directory as
 * other files are (`io/intake/attachments.ts`), transcribed (`transcriber.ts`), and turned into the
 * user message's text and the chat's notice by `core/voice/voice-text.ts`.
 *
 * Runs inside the message's handler, so in its chat's lane: the lane waits for the download and the
 * transcription, which the transcriber's deadline bounds, and for nothing else. Nothing here is durable
 * until the handler puts the message in the inbox, so a gateway killed mid-transcription leaves the
 * update unhandled and the next boot takes the note again. A note that is not transcribed still goes to
 * the agent, as a file with the reason; only a download that fails (or a file over the Bot API's
 * limit) ends with a reply and no message, as for any attachment.
 *
 * The length the cap, the text and the cost are held to is read from the downloaded file
 * (`core/voice/duration.ts`), never the message's `duration`, which the sender's app writes; a file
 * whose length cannot be read is held to the bound its size gives. A transcription is heard under the
 * daily budgets ({@link meteredTranscriber}): none while its sender may not spend, and each one booked.
 */
import { readFile } from 'node:fs/promises';
import type { Attachment, Route } from '@switchyard/protocol';
import type { Message } from 'grammy/types';
import { durationBound, recordingDuration } from '../../core/voice/duration.js';
import { type SpokenNote, type VoiceText, voiceText } from '../../core/voice/voice-text.js';
import { type AttachmentOptions, DOWNLOAD_LIMIT_BYTES, download, TOO_BIG } from '../intake/attachments.js';
import type { SpendLedger } from '../spend/spend-ledger.js';
import { errorText } from '../telegram/bot-api.js';
import type { Transcriber } from './voice-types.js';

/** A recording in a message: what the rules need, and what the download needs. */
export interface Recording extends SpokenNote {
  fileId: string;
  size: number | undefined;
  mime: string;
  /** The name the recording is handed to the agent under. */
  name: string;
}

/** The recording a message carries (voice note, audio file or video note), if any. */
export function recordingOf(message: Message): Recording | undefined {
  if (message.voice) {
    const v = message.voice;
    const mime = v.mime_type ?? 'audio/ogg';
    return {
      kind: 'voice',
      durationSeconds: v.duration,
      fileId: v.file_id,
      size: v.file_size,
      mime,
      name: 'voice-message.ogg',
    };
  }
  if (message.audio) {
    const a = message.audio;
    const mime = a.mime_type ?? 'audio/mpeg';
    const name = a.file_name ?? `audio${mime === 'audio/mpeg' ? '.mp3' : '.bin'}`;
    return { kind: 'audio', durationSeconds: a.duration, fileId: a.file_id, size: a.file_size, mime, name };
  }
  if (message.video_note) {
    const n = message.video_note;
    return {
      kind: 'video_note',
      durationSeconds: n.duration,
      fileId: n.file_id,
      size: n.file_size,
      mime: 'video/mp4',
      name: 'video-message.mp4',
    };
  }
  return undefined;
}

/** The recording taken in: the message's text and files, and the notice for the chat; or a reply only. */
export type VoiceIntake =
  | ({ ok: true; attachments: Attachment[] } & VoiceText)
  | { ok: false; reply: string };

/** Downloads and transcribes the message's recording; undefined when it carries none. Never throws. */
export async function takeRecording(
  message: Message,
  caption: string,
  options: { transcriber: Transcriber; attachments: AttachmentOptions },
): Promise<VoiceIntake | undefined> {
  const recording = recordingOf(message);
  if (!recording) return undefined;
  if (recording.size !== undefined && recording.size > DOWNLOAD_LIMIT_BYTES)
    return { ok: false, reply: TOO_BIG };
  let attachment: Attachment;
  try {
    attachment = await download(
      { kind: 'document', id: recording.fileId, name: recording.name, mime: recording.mime },
      options.attachments,
    );
  } catch (error) {
    if (/file is too big/i.test(errorText(error))) return { ok: false, reply: TOO_BIG };
    return { ok: false, reply: 'Downloading that recording failed. Please send it again.' };
  }
  const durationSeconds = await measuredSeconds(attachment.path);
  const heard = await options.transcriber.transcribe(
    { path: attachment.path, durationSeconds, mime: recording.mime },
    options.attachments.signal,
  );
  return {
    ok: true,
    attachments: [attachment],
    ...voiceText({ ...recording, durationSeconds }, heard, caption),
  };
}

/** The saved recording's length, read from its bytes, or the bound its size gives (see the module comment). */
async function measuredSeconds(path: string): Promise<number> {
  const bytes = await readFile(path).catch(() => new Uint8Array(0));
  return Math.round(recordingDuration(bytes) ?? durationBound(bytes.length));
}

/**
 * The transcriber a voice note of `who` is heard with under the budgets: none while they may not spend
 * (the note goes on as a file, and the ledger weighs the message as any other), else `transcriber` with
 * each transcription that produced text booked at its length.
 */
export function meteredTranscriber(
  transcriber: Transcriber,
  spend: Pick<SpendLedger, 'allows' | 'chargeTranscription'>,
  who: { id: string; route: Route; userId: number | undefined },
): Transcriber {
  if (spend.allows(who.route, who.userId).admit !== true)
    return { transcribe: async () => ({ kind: 'unconfigured' }) };
  return {
    async transcribe(file, signal) {
      const heard = await transcriber.transcribe(file, signal);
      if (heard.kind === 'text')
        spend.chargeTranscription(who.id, who.route, who.userId, file.durationSeconds);
      return heard;
    },
  };
}
