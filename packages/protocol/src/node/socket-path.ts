/**
 * Where a Unix socket may live. `sockaddr_un.sun_path` holds 108 bytes with its NUL: a longer path is
 * not refused by every layer, it is cut, and the socket then exists under a name nobody else knows
 * (its `chmod` fails, a restart cannot find the stale file, two paths that share a prefix meet on one
 * socket). So a socket path is chosen to fit by construction: the natural path when it fits, otherwise a
 * name hashed from the natural path in a private directory of this user under `/tmp`.
 *
 * Contract: {@link shortSocketPath} is pure and deterministic (same path and uid, same answer), so a
 * process that restarts, and a child that was given the path before it, meet on the same socket.
 * `/tmp` and not `$XDG_RUNTIME_DIR`: the latter differs between login sessions and is removed at
 * logout, while the processes that connect (Claude's MCP servers) outlive both.
 */
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { ProtocolError } from '../common/errors.js';

/** Unix socket paths are limited by `sockaddr_un.sun_path` (108 bytes with the terminating NUL). */
export const MAX_SOCKET_PATH_BYTES = 107;

/** This user's directory for sockets whose natural path is too long. */
export function shortSocketRoot(uid: number = process.getuid?.() ?? 0): string {
  return `/tmp/switchyard-${uid}`;
}

/** Whether a socket can be bound at `socketPath` without being cut. */
export function socketPathFits(socketPath: string): boolean {
  return Buffer.byteLength(socketPath) <= MAX_SOCKET_PATH_BYTES;
}

/**
 * The path to bind a socket whose natural place is `preferred`: `preferred` itself when it fits,
 * otherwise `<root>/<hash of preferred>.sock` (`<root>/<hash>/<basename>` with `keepBasename`, for a
 * socket whose directory is its own). The hash is over the absolute path, so distinct places never
 * share a socket.
 */
export function shortSocketPath(
  preferred: string,
  options: { uid?: number; keepBasename?: boolean } = {},
): string {
  const absolute = path.resolve(preferred);
  if (socketPathFits(absolute)) return absolute;
  const hash = createHash('sha256').update(absolute).digest('hex').slice(0, 20);
  const root = shortSocketRoot(options.uid);
  return options.keepBasename
    ? path.join(root, hash, path.basename(absolute))
    : path.join(root, `${hash}.sock`);
}

/**
 * Makes the directory of a socket chosen by {@link shortSocketPath} safe to bind in: when the path is
 * under this user's short root, the root is created 0700 and must be a real directory owned by this
 * user that nobody else can write (in a shared `/tmp` another user could have made it first, and could
 * then swap the socket). A natural path is left to its owner's directory modes. Throws a
 * {@link ProtocolError} saying what to remove.
 */
export function prepareSocketDirectory(socketPath: string, uid: number = process.getuid?.() ?? 0): void {
  const root = shortSocketRoot(uid);
  if (!socketPath.startsWith(`${root}/`)) {
    mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o700 });
    return;
  }
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const stat = lstatSync(root);
  if (!stat.isDirectory() || stat.uid !== uid) {
    throw new ProtocolError(
      `${root} is not a directory of this user (uid ${uid}): someone else made it; remove it and start again`,
    );
  }
  if ((stat.mode & 0o077) !== 0) chmodSync(root, 0o700);
  mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o700 });
}
