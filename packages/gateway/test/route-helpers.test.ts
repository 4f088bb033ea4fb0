import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');

/** Every gateway source file outside core/intake/route.ts, with its text. */
function sources(): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts'))
        out.push({ file: path.slice(SRC.length + 1), text: readFileSync(path, 'utf8') });
    }
  };
  walk(SRC);
  return out.filter((s) => s.file !== join('core', 'intake', 'route.ts'));
}

describe('route helpers are the only place that builds thread parameters and lane keys', () => {
  it('no module writes its own `message_thread_id` parameter (core/intake/route.ts threadParams does)', () => {
    const offenders = sources().filter((s) => /\{\s*message_thread_id:/.test(s.text));
    expect(offenders.map((s) => s.file)).toEqual([]);
  });

  it('no module builds a lane key of its own from a chat and thread id (core/intake/route.ts laneKey does)', () => {
    const offenders = sources().filter((s) => /`\$\{\w+\.chatId\}:\$\{\w+\.threadId/.test(s.text));
    expect(offenders.map((s) => s.file)).toEqual([]);
  });
});
