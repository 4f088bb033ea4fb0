// Runs one bridge from the built package, for tests that kill it with SIGKILL.
// Options come as JSON in BRIDGE_OPTIONS; SIGTERM is a `restart` stop (the CLI keeps running).
import { createBridge } from '../dist/index.js';

const options = JSON.parse(process.env.BRIDGE_OPTIONS ?? '{}');
const bridge = createBridge({
  ...options,
  logger: {
    debug() {},
    info(fields, msg) {
      process.stderr.write(`${JSON.stringify({ level: 'info', ...fields, msg })}\n`);
    },
    warn(fields, msg) {
      process.stderr.write(`${JSON.stringify({ level: 'warn', ...fields, msg })}\n`);
    },
    error(fields, msg) {
      process.stderr.write(`${JSON.stringify({ level: 'error', ...fields, msg })}\n`);
    },
    child() {
      return this;
    },
  },
});
await bridge.start();
process.stdout.write('started\n');
process.on('SIGTERM', () => {
  bridge.stop('restart').then(() => process.exit(0));
});
