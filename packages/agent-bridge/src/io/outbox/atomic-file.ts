/**
 * Whole-file replacement that a crash cannot tear: the outbox's compaction, the snapshot, the waiting
 * queue and the file exchange's index all replace their file this way.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Writes a file so that a crash leaves either the old content or the new: temp file, fsync, rename, fsync
 * dir. A failure (a full disk) leaves the old file and no temp file behind, and throws.
 */
export function writeFileAtomic(path: string, content: string | Buffer): void {
  const tmp = join(dirname(path), `.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    try {
      const written = writeSync(fd, bytes);
      if (written !== bytes.length)
        throw new Error(`short write to ${tmp}: ${written} of ${bytes.length} bytes`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  const dir = openSync(dirname(path), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
