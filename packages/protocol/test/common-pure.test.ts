/**
 * The protocol's pure part loads no Node module: a core that imports `@switchyard/protocol/common` must
 * not get `node:net` or `node:fs` with it (biome refuses the import in `src/common/`; this follows every
 * import from the face, as loading it would).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../src');

/** Every module loading `entry` loads, and the bare (non-relative) specifiers they import. */
function reach(entry: string): { modules: Set<string>; external: Set<string> } {
  const modules = new Set<string>();
  const external = new Set<string>();
  const visit = (file: string): void => {
    if (modules.has(file)) return;
    modules.add(file);
    const text = readFileSync(file, 'utf8');
    // `import type` is erased: it loads nothing.
    for (const match of text.matchAll(/^(?:import|export)(?! type )[^;]*?from '([^']+)';/gms)) {
      const spec = match[1] as string;
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      else external.add(spec);
    }
  };
  visit(entry);
  return { modules, external };
}

describe('@switchyard/protocol/common', () => {
  it('reaches no Node module and nothing of src/node/', () => {
    const { modules, external } = reach(join(SRC, 'common/index.ts'));
    expect(modules.size).toBeGreaterThan(5);
    expect([...modules].filter((file) => !file.startsWith(join(SRC, 'common')))).toEqual([]);
    expect([...external].sort()).toEqual(['msgpackr', 'zod']);
  });

  it('the package index still reaches the Node part (a shell gets both)', () => {
    const { external } = reach(join(SRC, 'index.ts'));
    expect([...external].some((spec) => spec.startsWith('node:'))).toBe(true);
  });
});
