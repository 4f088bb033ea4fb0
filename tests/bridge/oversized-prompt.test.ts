/**
 * A permission request too large for the bridge's stdout line cap (the real CLI asking to Write a big
 * file) is answered — denied, with the reason — instead of leaving the turn waiting for ever; and the
 * turn's `result`, over the cap too (it repeats the denied input in `permission_denials`), still ends it.
 */
import { join } from 'node:path';
import { rule, say, write } from '@switchyard/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Bridge, createBridge } from '../../packages/agent-bridge/src/index.js';
import { bridgeOptions, createRig, type Rig, userMessage } from './harness.js';

describe('an oversized permission request', () => {
  let rig: Rig;
  let bridge: Bridge | undefined;

  beforeAll(async () => {
    rig = await createRig([
      rule(
        'write the big file',
        (ctx) => write(join(ctx.cwd ?? '/nonexistent', 'big.txt'), 'x'.repeat(200 * 1024)),
        say('The write was refused.'),
      ),
    ]);
  }, 60_000);

  afterAll(async () => {
    await bridge?.stop('shutdown');
    await rig?.cleanup();
  });

  it('is denied with the reason, and the turn ends', async () => {
    bridge = createBridge(bridgeOptions(rig, { maxLineBytes: 64 * 1024 }));
    await bridge.start();
    await rig.send(userMessage('in-big', 'write the big file'));
    const ended = await rig.waitFor((f) => f.type === 'turn_ended', 90_000);
    expect(ended).toMatchObject({ outcome: 'success' });
    expect(rig.of('permission_request')).toEqual([]);
    const results = rig.model.messageRequests().flatMap((r) => r.view?.toolResults ?? []);
    expect(JSON.stringify(results)).toContain('too large for Switchyard to show the user');
    expect(rig.of('text').map((f) => f.text)).toContain('The write was refused.');
  }, 120_000);
});
