/**
 * The files users and the bot have sent: content plus the metadata `getFile` and `Message.photo` /
 * `Message.document` need, addressable by `file_id` and by download path. Memory only.
 */
import { randomBytes } from 'node:crypto';
import type { SandboxFileRef } from './records.js';

/** A stored file's content and metadata. */
export interface StoredFile extends SandboxFileRef {
  /** Path under `/file/bot<token>/`. */
  filePath: string;
  bytes: Uint8Array;
  /** For a photo: the smaller size listed before it in `Message.photo`. */
  thumbnailFileId?: string;
}

/**
 * How a file is filed: photos get a thumbnail and a `.jpg` path, documents keep their name, voice
 * notes get an `.oga` path (as Telegram's do).
 */
export interface FileMeta {
  folder: 'photos' | 'documents' | 'voice';
  fileName?: string;
  mimeType?: string;
  width?: number;
  height?: number;
  /** A voice note's length in seconds. */
  duration?: number;
}

/** A file's extension when its name gives none, by folder. */
const FOLDER_EXTENSION = { photos: 'jpg', documents: 'dat', voice: 'oga' } as const;
/** How Telegram's `file_id`s of each kind begin. */
const FOLDER_PREFIX = { photos: 'AgAC', documents: 'BQAC', voice: 'AwAC' } as const;

/** Every stored file, by id and by path. */
export class FileStore {
  readonly #byId = new Map<string, StoredFile>();
  readonly #byPath = new Map<string, StoredFile>();
  #next = 1;

  /**
   * Stores file content and returns its record (with a fresh `file_id` and path). A photo also gets a
   * thumbnail entry (same bytes, nominal smaller size), so `Message.photo` has more than one size.
   */
  add(bytes: Uint8Array, meta: FileMeta): StoredFile {
    const file = this.#store(bytes, meta);
    if (meta.folder === 'photos') file.thumbnailFileId = this.#store(bytes, { folder: 'photos' }).fileId;
    return file;
  }

  /** A file by `file_id`. */
  get(fileId: string): StoredFile | undefined {
    return this.#byId.get(fileId);
  }

  /** A file by its download path. */
  byPath(path: string): StoredFile | undefined {
    return this.#byPath.get(path);
  }

  #store(bytes: Uint8Array, meta: FileMeta): StoredFile {
    const n = this.#next++;
    const extension = /\.([A-Za-z0-9]{1,8})$/.exec(meta.fileName ?? '')?.[1] ?? FOLDER_EXTENSION[meta.folder];
    const file: StoredFile = {
      fileId: `${FOLDER_PREFIX[meta.folder]}${randomBytes(12).toString('base64url')}${n}`,
      fileUniqueId: `AQAD${n.toString(36)}${randomBytes(3).toString('hex')}`,
      filePath: `${meta.folder}/file_${n}.${extension}`,
      size: bytes.byteLength,
      bytes,
      ...(meta.fileName !== undefined ? { fileName: meta.fileName } : {}),
      ...(meta.mimeType !== undefined ? { mimeType: meta.mimeType } : {}),
      ...(meta.width !== undefined ? { width: meta.width } : {}),
      ...(meta.height !== undefined ? { height: meta.height } : {}),
      ...(meta.duration !== undefined ? { duration: meta.duration } : {}),
    };
    this.#byId.set(file.fileId, file);
    this.#byPath.set(file.filePath, file);
    return file;
  }
}
