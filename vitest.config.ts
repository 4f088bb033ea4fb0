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
      '@switchyard/protocol': pkg('protocol'),
      '@switchyard/card': pkg('card'),
      '@switchyard/sandbox': pkg('sandbox'),
      '@switchyard/agent-bridge': pkg('agent-bridge'),
      '@switchyard/gateway': pkg('gateway'),
      '@switchyard/cli': pkg('cli'),
    },
  },
  test: {
    maxWorkers: 5,
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        // No child processes, inject what they wait on; most tests wait on sockets and timers rather
        // than the CPU, so six files run at once even on two cores.
        test: {
          name: 'unit',
          include: ['packages/*/test/**/*.test.ts'],
          testTimeout: 20_000,
          // Projects with their own worker counts run one after another, in this order.
        },
      },
      {
        // Child processes, so not in the packages' unit suites: the bridge against the real CLI, the
        // bridge and the gateway as real processes killed and restarted, the scripted Messages API under
        // the real CLI. Each test owns its temp directories and ports, so files run side by side.
        extends: true,
        test: {
          name: 'processes',
          include: ['tests/bridge/**/*.test.ts', 'tests/gateway/**/*.test.ts', 'tests/sandbox/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Both services as real processes with the real CLI. Each file owns its temp directories, ports
        // and config (and `status` tells configs apart), so two run at once.
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
        // The fault matrix and the soak load both cores with many conversations and time their faults:
        // alone, one after the other.
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
