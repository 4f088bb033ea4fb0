/**
 * The gateway's wiring as issue 18 asks for it: options in a module that imports only types, one
 * composition step, `gateway.ts` only lifecycle, and no service handed out through a getter.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');
const read = (file: string): string => readFileSync(join(SRC, file), 'utf8');
const shells = readdirSync(SRC, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.ts'));

describe('gateway wiring', () => {
  it('options.ts imports types only', () => {
    const imports = read('options.ts').match(/^import .*$/gm) ?? [];
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((line) => !line.startsWith('import type '))).toEqual([]);
  });

  it('gateway.ts is the lifecycle only: about 150 lines, building no service itself', () => {
    const text = read('gateway.ts');
    expect(text.split('\n').length).toBeLessThanOrEqual(150);
    expect(text.match(/\bcreate(?!Gateway)[A-Z]\w*\(/g) ?? []).toEqual([]);
  });

  it('no module hands services out through ready(), live() or db() getters', () => {
    const getters = /\bdb\(\)|\bready\s*[(:]|live\(\)\s*\?\.|live\(\):\s*\|/;
    expect(shells.filter((f) => getters.test(read(f)))).toEqual([]);
  });
});
