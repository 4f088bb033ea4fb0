/**
 * The processes this machine's `/proc` lists (Linux). The two searches of it share this listing: the
 * orphans on a conversation's fifo (`child.ts`) and the `claude` processes a session claim weighs
 * (`io/terminal/process-scan.ts`).
 */
import { readdirSync } from 'node:fs';

/** Every pid `/proc` lists but this process's own; none where `/proc` cannot be read. */
export function otherPids(): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  return names
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => pid !== process.pid);
}
