import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { LongestFirst } from './tests/sequencer.js';

const pkg = (name: string) => fileURLToPath(new URL(`./packages/${name}/src/index.ts`, import.meta.url));

/**
 * One vitest run for the whole workspace. Unit tests import sibling packages from source (the alias),
 * so they do not need a build; end-to-end tests in `tests/` spawn the built services (`pnpm build`).
 */
export default defineConfig({
  resolve: {
    alias: {
      // A subpath before its package's entry: an alias also matches the paths below its name.
      '@switchyard/protocol/common': fileURLToPath(
        new URL('./packages/protocol/src/common/index.ts', import.meta.url),
      ),
      '@switchyard/protocol/node': fileURLToPath(
        new URL('./packages/protocol/src/node/index.ts', import.meta.url),
      ),
      '@switchyard/protocol': pkg('protocol'),
      '@switchyard/card': pkg('card'),
      '@switchyard/sandbox': pkg('sandbox'),
      '@switchyard/agent-bridge': pkg('agent-bridge'),
      // Before the package's own entry: an alias also matches the paths below its name.
      '@switchyard/gateway/cron': fileURLToPath(
        new URL('./packages/gateway/src/io/automation/cron.ts', import.meta.url),
      ),
      '@switchyard/gateway': pkg('gateway'),
    },
  },
  test: {
    // All four projects run at once, in one pool: the suite waits on sockets, timers and child processes
    // far more than on the CPU (one core busy on average, measured on two), so five files at a time keep
    // both cores working, and the run takes about as long as its longest file instead of the sum of the
    // projects. The longest files start first (tests/sequencer.ts). Every file owns its temp directories,
    // ports and config, so any two can run side by side.
    maxWorkers: 5,
    sequence: { sequencer: LongestFirst },
    // A worker keeps the modules it loaded for its next file: importing the packages from source again
    // for each file was most of the unit project's CPU (110 s of import; 71 s in all, 32 s without) and
    // ~70 s of the others'. No test mocks a module, stubs a global or changes the environment.
    isolate: false,
    projects: [
      {
        extends: true,
        // No child processes, inject what they wait on. `pnpm test:quick` runs this project alone.
        test: {
          name: 'unit',
          include: ['packages/*/test/**/*.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        // Child processes, so not in the packages' unit suites: the bridge against the real CLI, the
        // bridge and the gateway as real processes killed and restarted, the scripted Messages API under
        // the real CLI.
        extends: true,
        test: {
          name: 'processes',
          include: ['tests/bridge/**/*.test.ts', 'tests/gateway/**/*.test.ts', 'tests/sandbox/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Both services as real processes with the real CLI (`status` tells the files' configs apart).
        extends: true,
        test: {
          name: 'e2e',
          include: ['tests/*.test.ts'],
          exclude: ['tests/fault-matrix*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
      {
        // The fault matrices and the soak: many conversations under injected faults, judged by one
        // invariant checker. They start first, being the longest.
        extends: true,
        test: {
          name: 'reliability',
          include: ['tests/fault-matrix*.test.ts', 'tests/soak/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
