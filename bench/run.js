// Runs every package's benchmark in turn (each in its own process, so one's heap does not colour the
// next) and prints their reports. `pnpm bench` builds first. Each benchmark measures its own baseline in
// the same run and reports ratios: these machines are shared and noisy, absolute numbers are not.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const benches = [
  ['protocol', 'packages/protocol/bench/protocol.bench.js'],
  ['card', 'packages/card/bench/card.bench.js'],
  ['agent-bridge', 'packages/agent-bridge/bench/bench.mjs'],
  ['ingress', 'packages/agent-bridge/bench/ingress.bench.mjs'],
  ['gateway', 'packages/gateway/bench/run.mjs'],
  ['files', 'packages/gateway/bench/files.bench.mjs'],
  ['reply-text', 'packages/gateway/bench/reply-text.bench.mjs'],
  ['gateway-heap', 'packages/gateway/bench/heap.bench.mjs'],
  ['quiet-chat', 'packages/gateway/bench/quiet.bench.mjs'],
  ['conversations', 'bench/conversations.bench.mjs'],
  ['remote', 'bench/remote.bench.mjs'],
];
const only = process.argv.slice(2);
let failed = 0;
for (const [name, file] of benches) {
  if (only.length > 0 && !only.includes(name)) continue;
  console.log(`\n=== ${name} (${file})`);
  const result = spawnSync(process.execPath, ['--expose-gc', file], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    failed++;
    console.log(`=== ${name}: exited with ${result.status ?? result.signal}`);
  }
}
process.exit(failed > 0 ? 1 : 0);
