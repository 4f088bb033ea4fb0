/**
 * The exchange directory: the one place the gateway and the bridge hand each other files, by path in a
 * frame (a user's attachment in `user_message`, the agent's file in `file_send`). Each side's own state
 * directory stays private; only this directory is shared.
 *
 * Contract:
 * - With `group` (the agent's group: the two services run as different users of it, as under the
 *   systemd units) the directory is exactly 2770 with that group; setgid, so every file in it has the
 *   group whoever creates it. Without `group` (one user runs both) it is 0700.
 * - A file appears under its final name only complete and with its final mode, exactly 0640 (0600
 *   without `group`), whatever the umask: written or copied to `<name>.part`, chmod-ed, then renamed.
 * - The writer names its files (unique names, never a sender's); the receiver only reads them, and only
 *   what lies directly in the directory, opened without following a link ({@link openExchangeFile}):
 *   a path in a frame is the peer's word, and the gateway must not upload its own files (the bot token,
 *   its database) because a compromised agent named them, or linked to them.
 *   Deleting is the gateway's retention (and the bridge's, for its own copies once sent).
 *
 * Under the units neither service may set a setgid bit (`RestrictSUIDSGID=`), so the units make the
 * directory before they start (`ExecStartPre=+install -d …`) and {@link prepareExchange} finds it right.
 */
import { chmodSync, chownSync, constants, mkdirSync, statSync } from 'node:fs';
import { chmod, copyFile, type FileHandle, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/** Where files cross between the two services of one agent, and with whom they are shared. */
export interface ExchangeOptions {
  /** The directory (absolute); both services of the agent are given the same one. */
  dir: string;
  /** The agent's group id when gateway and bridge run as different users of it; absent: one user. */
  group?: number | undefined;
}

/** The exact modes of the directory and of the files in it. */
export function exchangeModes(options: ExchangeOptions): { directoryMode: number; fileMode: number } {
  return options.group === undefined
    ? { directoryMode: 0o700, fileMode: 0o600 }
    : { directoryMode: 0o2770, fileMode: 0o640 };
}

/**
 * Creates the directory if missing and makes its group and mode exact. Changes nothing that is already
 * right (so it works where this process may not set a setgid bit); throws, saying how to fix it, when
 * it is wrong and this process may not change it (not its owner).
 */
export function prepareExchange(options: ExchangeOptions): void {
  const { dir, group } = options;
  const { directoryMode } = exchangeModes(options);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const found = statSync(dir);
  if (!found.isDirectory()) throw new Error(`the exchange directory ${dir} is not a directory`);
  // A shared directory (sticky or writable by anyone, like /tmp) is never narrowed to the exchange's
  // modes: that would lock every other user out of it.
  if ((found.mode & 0o1002) !== 0)
    throw new Error(
      `the exchange directory ${dir} is a shared directory (mode ${(found.mode & 0o7777).toString(8)}): give the agent a directory of its own (files.dir, or leave it out for <stateDir>/files)`,
    );
  try {
    if (group !== undefined && found.gid !== group) chownSync(dir, -1, group);
    if ((found.mode & 0o7777) !== directoryMode) chmodSync(dir, directoryMode);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    const want =
      group === undefined ? 'mode 0700' : `mode 2770, group ${group} (install -d -g GROUP -m 2770 ${dir})`;
    throw new Error(
      `the exchange directory ${dir} is mode ${(found.mode & 0o7777).toString(8)}, owner ${found.uid}, group ${found.gid}, and this process (uid ${process.getuid?.() ?? '?'}) cannot change it (${code}): as root, make it ${want}; under the systemd units, restarting the gateway unit does`,
    );
  }
}

/** Writes `data` into the exchange as `name` (see the module comment); returns its path. */
export async function writeExchangeFile(
  options: ExchangeOptions,
  name: string,
  data: Uint8Array,
): Promise<string> {
  const path = join(options.dir, name);
  const part = `${path}.part`;
  const handle = await open(part, 'w', 0o600);
  try {
    await handle.chmod(exchangeModes(options).fileMode);
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
  await rename(part, path);
  return path;
}

/**
 * Copies the file at `source` into the exchange as `name` (the kernel's copy, no pass through this
 * process); returns its path. The copy takes the source's mode until the chmod, which is why it is made
 * under a `.part` name no reader looks at.
 */
export async function copyIntoExchange(
  options: ExchangeOptions,
  source: string,
  name: string,
): Promise<string> {
  const path = join(options.dir, name);
  const part = `${path}.part`;
  await copyFile(source, part);
  await chmod(part, exchangeModes(options).fileMode);
  await rename(part, path);
  return path;
}

/**
 * Deletes the regular files directly in `dir` last written before `before` (ms), except the paths
 * `inUse()` names (read after the listing: a file saved meanwhile is younger than `before` anyway), and a
 * `.part` a crash left is one of them. A missing directory has nothing to delete. Returns how many went.
 */
export async function deleteOlderFiles(
  dir: string,
  before: number,
  inUse: () => ReadonlySet<string> = () => new Set(),
): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  const kept = inUse();
  let deleted = 0;
  for (const name of names) {
    const path = join(dir, name);
    if (kept.has(path)) continue;
    try {
      const st = await stat(path);
      if (!st.isFile() || st.mtimeMs >= before) continue;
      await unlink(path);
      deleted += 1;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return deleted;
}

/** A file of the exchange opened for reading (close `handle` when done), or why it cannot be. */
export type OpenedExchangeFile =
  | { ok: true; handle: FileHandle; size: number }
  | { ok: false; problem: string };

/**
 * Opens a file a peer named by `path`: it must be directly in the exchange directory, not a link, and a
 * regular file. Read through the returned handle, not the path, so a file swapped after the check is
 * never what is read.
 */
export async function openExchangeFile(options: ExchangeOptions, path: string): Promise<OpenedExchangeFile> {
  if (resolve(path) !== path || dirname(path) !== resolve(options.dir)) {
    return { ok: false, problem: 'is not in the exchange directory' };
  }
  let handle: FileHandle;
  try {
    // O_NONBLOCK: a FIFO put in its place must not hang the open.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      ok: false,
      problem:
        code === 'ELOOP' ? 'is a link' : code === 'ENOENT' ? 'is gone' : `cannot be read (${code ?? err})`,
    };
  }
  const found = await handle.stat();
  if (!found.isFile()) {
    await handle.close();
    return { ok: false, problem: 'is not a regular file' };
  }
  return { ok: true, handle, size: found.size };
}
