/** What the tests of `spawnChild` share: their processes ended and their directory removed after each test. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { ChildHandle } from '../../packages/agent-bridge/src/io/process/child.js';

/**
 * Registers an `afterEach` that ends every handle pushed onto `handles` and removes the directories
 * `tempDir` made; call it once at the top of a test file.
 */
export function spawnedChildren(): { handles: ChildHandle[]; tempDir(prefix: string): string } {
  const handles: ChildHandle[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const handle of handles.splice(0)) {
      await handle.terminate(500);
      handle.detach();
    }
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    handles,
    tempDir(prefix) {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
  };
}
