// Runs one bridge from the built package, for tests that kill it with SIGKILL.
// Options come as JSON in BRIDGE_OPTIONS; SIGTERM is a `restart` stop (the CLI keeps running).
// BRIDGE_KILL_AT='{"stage":"written","key":"in:x"}' makes the bridge SIGKILL itself at that stage of
// that stdin write (see `onDeliveryStage`): the crash lands exactly there, not somewhere near it.
import { createBridge } from '../../packages/agent-bridge/dist/index.js';

const options = JSON.parse(process.env.BRIDGE_OPTIONS ?? '{}');
const killAt = process.env.BRIDGE_KILL_AT ? JSON.parse(process.env.BRIDGE_KILL_AT) : undefined;
const bridge = createBridge({
  ...options,
  ...(killAt
    ? {
        onDeliveryStage(stage, key) {
          if (stage === killAt.stage && key === killAt.key) process.kill(process.pid, 'SIGKILL');
        },
      }
    : {}),
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
