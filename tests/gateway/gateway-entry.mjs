// A gateway as a real child process, for the kill -9 tests: runs the built package (`npx tsc -b`
// first). Options come as JSON in GW_OPTIONS.
import { createGateway } from '@switchyard/gateway';

const gateway = createGateway(JSON.parse(process.env.GW_OPTIONS ?? '{}'));
await gateway.start();
process.on('SIGTERM', () => {
  void gateway.stop().then(() => process.exit(0));
});
