/** What the end-to-end tests of files compare: a checksum, and the bytes Telegram holds for a file. */
import { createHash } from 'node:crypto';
import type { TelegramServer } from '@switchyard/sandbox';

/** SHA-256 of `bytes`, hex. */
export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** The bytes Telegram holds for a file id, downloaded the way a bot does (getFile, then /file/). */
export async function download(telegram: TelegramServer, fileId: string): Promise<Buffer> {
  const api = `${telegram.apiRoot}/bot${telegram.token}`;
  const info = (await (await fetch(`${api}/getFile?file_id=${encodeURIComponent(fileId)}`)).json()) as {
    result: { file_path: string };
  };
  const file = await fetch(`${telegram.apiRoot}/file/bot${telegram.token}/${info.result.file_path}`);
  return Buffer.from(await file.arrayBuffer());
}
