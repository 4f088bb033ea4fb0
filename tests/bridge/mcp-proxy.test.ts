/**
 * A `claude` whose environment names an HTTP proxy (the allowlist passes HTTPS_PROXY and friends) sends
 * loopback requests through it too: the file tools' endpoint on 127.0.0.1 must still be reached
 * directly, or every send would go to the proxy's host. The proxy here is a closed port, so anything
 * routed through it fails.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameOf } from '@switchyard/protocol';
import { rule, say, sendFile, type ToolResult } from '@switchyard/sandbox';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Bridge, createBridge } from '../../packages/agent-bridge/src/index.js';
import { bridgeOptions, createRig, type Rig, userMessage } from './harness.js';

let rig: Rig;
let bridge: Bridge;
let result: ToolResult | undefined;

beforeAll(async () => {
  rig = await createRig([
    rule('send the notes', sendFile('notes.txt'), (ctx) => {
      result = ctx.lastToolResults[0];
      return say('Done.');
    }),
  ]);
  writeFileSync(join(rig.workDir, 'notes.txt'), 'notes\n');
  Object.assign(rig.env, { HTTPS_PROXY: 'http://127.0.0.1:9', HTTP_PROXY: 'http://127.0.0.1:9' });
  bridge = createBridge(bridgeOptions(rig));
  await bridge.start();
});

afterAll(async () => {
  await bridge?.stop('shutdown');
  await rig?.cleanup();
});

it('a claude with HTTPS_PROXY set still reaches the file tools on 127.0.0.1', async () => {
  await rig.send(userMessage('n1', 'send the notes'));
  const send = (await rig.waitFor((f) => f.type === 'file_send', 90_000)) as FrameOf<'file_send'>;
  expect(readFileSync(send.files[0]?.path ?? '', 'utf8')).toBe('notes\n');
  await rig.send({ type: 'file_sent', fileId: send.fileId, ok: true, messageIds: [5] });
  await rig.waitFor((f) => f.type === 'turn_ended', 60_000);
  expect(result).toMatchObject({ isError: false });
});
