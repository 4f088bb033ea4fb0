import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

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
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['packages/*/test/**/*.test.ts'], testTimeout: 20_000 },
      },
      {
        // The bridge against the real CLI, the bridge as a real process killed and restarted: child
        // processes, so not in the packages' unit suites, but each test owns its own temp directories
        // and ports, so files run side by side.
        extends: true,
        test: {
          name: 'bridge',
          include: ['tests/bridge/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['tests/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 60_000,
          // e2e tests start real processes; two cores do not run many at once well.
          maxWorkers: 1,
          fileParallelism: false,
        },
      },
    ],
  },
});
