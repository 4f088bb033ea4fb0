/**
 * Which files the agent may send, and how Telegram will show them: the checks a `send_*` tool call
 * passes before anything is copied or sent. All paths of a call are checked first, so a call with one
 * bad path sends nothing (never a partial album).
 *
 * Rules:
 * - A path is resolved against the working directory, then through every symlink; the real path must lie
 *   inside the working directory or one of the configured extra directories (themselves resolved).
 * - It must exist and be a regular file, of at most {@link FILE_LIMITS}.documentBytes (Telegram's
 *   upload limit for bots).
 * - A photo is shown inline only if it is JPEG, PNG or WebP (by its first bytes, not its name) and at
 *   most {@link FILE_LIMITS}.photoBytes; otherwise it goes as a document and the tool result says why.
 * - An album holds 2–10 files (one file is sent alone); Telegram does not mix documents with photos in
 *   one album, so a mixed album goes as documents, and the result says so.
 */
import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, relative, sep } from 'node:path';

/** Telegram's upload limits for bots (Bot API: 50 MB for files, 10 MB for photos) and its album size. */
export const FILE_LIMITS = {
  documentBytes: 50 * 1024 * 1024,
  photoBytes: 10 * 1024 * 1024,
  albumFiles: 10,
} as const;

/** The tools, by the name the model calls (without the `mcp__switchyard__` prefix). */
export type FileTool = 'send_file' | 'send_photo' | 'send_files';

/** One file that passed the checks. */
export interface CheckedFile {
  /** The resolved real path, to copy from. */
  real: string;
  name: string;
  size: number;
  kind: 'photo' | 'document';
}

/** The outcome of {@link checkFiles}: the files and notes for the tool result, or the refusal. */
export type CheckResult = { ok: true; files: CheckedFile[]; notes: string[] } | { ok: false; error: string };

const MB = 1024 * 1024;
const mb = (bytes: number): string => `${(bytes / MB).toFixed(1)} MB`;

/** Whether `path` is `root` or below it (both real paths). */
function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** JPEG, PNG or WebP by magic number: the formats Telegram shows inline as a photo. */
export function isInlineImage(head: Uint8Array): boolean {
  const b = (i: number): number => head[i] ?? -1;
  if (b(0) === 0xff && b(1) === 0xd8 && b(2) === 0xff) return true;
  if (b(0) === 0x89 && b(1) === 0x50 && b(2) === 0x4e && b(3) === 0x47) return true;
  const ascii = (from: number, to: number): string => String.fromCharCode(...head.subarray(from, to));
  return head.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP';
}

function readHead(path: string): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(12);
    const n = readSync(fd, head, 0, 12, 0);
    return head.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** Resolves and checks one path; an error string says which path and why. */
function checkOne(path: string, workDir: string, roots: readonly string[]): CheckedFile | string {
  const absolute = isAbsolute(path) ? path : join(workDir, path);
  let real: string;
  try {
    real = realpathSync(absolute);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return `${path}: no such file`;
    return `${path}: cannot be read (${code ?? 'error'})`;
  }
  if (!roots.some((root) => inside(root, real))) {
    return `${path}: outside the working directory (${roots.join(', ')}); only files there can be sent — copy it there first`;
  }
  const stat = statSync(real);
  if (stat.isDirectory()) return `${path}: is a directory; send the files in it, or an archive of it`;
  if (!stat.isFile()) return `${path}: not a regular file`;
  if (stat.size > FILE_LIMITS.documentBytes) {
    return `${path}: ${mb(stat.size)}, over Telegram's ${mb(FILE_LIMITS.documentBytes)} upload limit for files; compress or split it`;
  }
  if (stat.size === 0) return `${path}: the file is empty; Telegram does not accept empty files`;
  const image = isInlineImage(readHead(real)) && stat.size <= FILE_LIMITS.photoBytes;
  return { real, name: basename(real), size: stat.size, kind: image ? 'photo' : 'document' };
}

/**
 * Checks the paths of one tool call against `roots` (real paths of the working directory and the extra
 * directories); relative paths are taken from `workDir`. See the module comment for the rules.
 */
export function checkFiles(
  tool: FileTool,
  paths: readonly string[],
  workDir: string,
  roots: readonly string[],
): CheckResult {
  if (paths.length === 0) return { ok: false, error: 'no path given' };
  if (tool !== 'send_files' && paths.length !== 1) return { ok: false, error: `${tool} takes one path` };
  if (paths.length > FILE_LIMITS.albumFiles) {
    return { ok: false, error: `${paths.length} files: an album holds at most ${FILE_LIMITS.albumFiles}` };
  }
  const files: CheckedFile[] = [];
  const errors: string[] = [];
  for (const path of paths) {
    const checked = checkOne(path, workDir, roots);
    if (typeof checked === 'string') errors.push(checked);
    else files.push(checked);
  }
  if (errors.length > 0) return { ok: false, error: `nothing was sent. ${errors.join('; ')}` };
  const notes: string[] = [];
  if (tool === 'send_file') {
    for (const file of files) file.kind = 'document';
  } else if (tool === 'send_photo') {
    const [file] = files as [CheckedFile];
    if (file.kind === 'document') {
      notes.push(
        file.size > FILE_LIMITS.photoBytes
          ? `${file.name} is over Telegram's ${mb(FILE_LIMITS.photoBytes)} photo limit, so it was sent as a document`
          : `${file.name} is not JPEG, PNG or WebP, so it was sent as a document`,
      );
    }
  } else if (files.some((f) => f.kind === 'document') && files.some((f) => f.kind === 'photo')) {
    for (const file of files) file.kind = 'document';
    notes.push('Telegram does not mix photos and documents in one album, so all were sent as documents');
  }
  return { ok: true, files, notes };
}
