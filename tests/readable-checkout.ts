/**
 * The built checkout as another user can reach it. Tests that run code as the agents' users (created by
 * the test) need the built packages and their node_modules; a checkout inside a directory only its owner
 * may enter (a home directory on many distributions, `mktemp -d`) is out of their reach, and those tests
 * failed there with "Cannot find module …/dist/…".
 *
 * Where every directory above the checkout lets others through, the checkout itself is used. Otherwise
 * the child runs in a private mount namespace where the checkout is bind-mounted at a path others can
 * reach, and drops to its user after the mount (`unshare`, `mount --bind`, `setpriv`). Nothing is copied:
 * a copy of node_modules took 11 s here, and a hard-linked one changed the ctime of files that
 * `deploy/pack.sh`, run by another test at the same moment, was putting in a tar ("file changed as we
 * read it"), since pnpm links both to its store.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Whether a user who is neither the owner nor in the group can pass through every directory to `dir`. */
export function othersCanReach(dir: string): boolean {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    if ((statSync(at).mode & 0o001) === 0) return false;
    if (path.dirname(at) === at) return true;
  }
}

/** Root here, and allowed a private mount namespace. */
export const canMountPrivately =
  process.getuid?.() === 0 && spawnSync('unshare', ['-m', '--propagation', 'private', 'true']).status === 0;

/** How a command runs as another user with the checkout in reach. */
export type CheckoutView =
  | {
      ok: true;
      /** Where that user finds the checkout. */
      root: string;
      /** The command line that runs `argv` as `uid`:`gid` (no supplementary groups) with `root` in reach. */
      asUser(uid: number, gid: number, argv: string[]): { command: string; args: string[]; ids: boolean };
      remove(): void;
    }
  | { ok: false; reason: string };

/** The checkout at `checkout`, as other users can run it (see the module comment). */
export function checkoutView(checkout: string): CheckoutView {
  if (othersCanReach(checkout)) {
    return {
      ok: true,
      root: checkout,
      // Node switches the ids itself (spawn's uid and gid).
      asUser: (_uid, _gid, [command = '', ...args]) => ({ command, args, ids: true }),
      remove: () => {},
    };
  }
  if ((statSync(checkout).mode & 0o001) === 0)
    return { ok: false, reason: `the checkout ${checkout} itself is closed to other users (mode 0700)` };
  if (!canMountPrivately)
    return {
      ok: false,
      reason:
        'the checkout is inside a directory other users cannot enter, and no private mount namespace is allowed here to show it to them',
    };
  const base = mkdtempSync(path.join(tmpdir(), 'sy-view-'));
  chmodSync(base, 0o755);
  const root = path.join(base, 'checkout');
  mkdirSync(root, { mode: 0o755 });
  const script =
    'set -e; mount --bind "$1" "$2"; u=$3; g=$4; shift 4; exec setpriv --reuid="$u" --regid="$g" --clear-groups -- "$@"';
  return {
    ok: true,
    root,
    asUser: (uid, gid, argv) => ({
      command: 'unshare',
      args: [
        '-m',
        '--propagation',
        'private',
        'sh',
        '-c',
        script,
        'sh',
        checkout,
        root,
        String(uid),
        String(gid),
        ...argv,
      ],
      ids: false,
    }),
    remove: () => rmSync(base, { recursive: true, force: true }),
  };
}
