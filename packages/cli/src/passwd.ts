/**
 * Users as this host's `/etc/passwd` lists them: who the agent's user `sy-NAME` is (its uid, group and
 * home, which is its Claude's HOME under the units) and the gateways' user `switchyard`. Read from the
 * file, not through NSS: Switchyard's users are local system users made by `useradd`.
 */
import { readFileSync } from 'node:fs';

/** The part of a passwd entry Switchyard uses. */
export interface PasswdEntry {
  uid: number;
  /** The primary group's id. */
  gid: number;
  home: string;
}

/** `name`'s entry in `file`, or undefined (no such user, or no file). */
export function passwdEntry(name: string, file = '/etc/passwd'): PasswdEntry | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const [user, , uid, gid, , home] = line.split(':');
    if (user === name && uid !== undefined && gid !== undefined && home !== undefined) {
      return { uid: Number(uid), gid: Number(gid), home };
    }
  }
  return undefined;
}
