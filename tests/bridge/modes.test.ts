/**
 * `bypassPermissions` is the operator's choice, never a chat command's: the bridge refuses a `set_mode`
 * outside the agent's allowed modes before the CLI hears of it, and never starts the CLI with a
 * `--permission-mode` the list does not allow — a mode a conversation kept from before the list
 * changed included. Real CLI against the scripted Messages API.
 */
import { readFileSync } from 'node:fs';
import { rule, say } from '@switchyard/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Bridge, createBridge } from '../../packages/agent-bridge/src/index.js';
import { bridgeOptions, createRig, type Rig, userMessage } from './harness.js';

/** The recorded Claude process's arguments, from /proc. */
function argsOf(pid: number | undefined): string[] {
  if (pid === undefined) throw new Error('no Claude process recorded');
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

describe('allowed permission modes', () => {
  let rig: Rig;
  let bridge: Bridge | undefined;

  beforeAll(async () => {
    rig = await createRig([rule('hello', say('Hello.'))]);
  }, 60_000);

  afterAll(async () => {
    await bridge?.stop('shutdown');
    await rig?.cleanup();
  });

  it('refuses a set_mode outside the list, and a mode kept from before is not passed to the next CLI', async () => {
    bridge = createBridge(bridgeOptions(rig));
    await bridge.start();
    await rig.send(userMessage('in-1', 'hello'));
    await rig.waitFor((f) => f.type === 'turn_ended', 60_000);

    let since = rig.frames.length;
    await rig.send({
      type: 'set_mode',
      commandId: 'cmd-bypass',
      route: { chatId: 42 },
      mode: 'bypassPermissions',
    });
    const refused = await rig.waitFor(
      (f) => f.type === 'command_result' && f.commandId === 'cmd-bypass',
      30_000,
      since,
    );
    expect(refused).toMatchObject({
      ok: false,
      message:
        'Mode bypassPermissions is not allowed for this agent. Allowed modes: default, acceptEdits, plan.',
    });

    await rig.send({ type: 'set_mode', commandId: 'cmd-edits', route: { chatId: 42 }, mode: 'acceptEdits' });
    expect(
      await rig.waitFor((f) => f.type === 'command_result' && f.commandId === 'cmd-edits', 30_000, since),
    ).toMatchObject({ ok: true });
    await bridge.stop('shutdown');

    // The operator narrows the list: the conversation's acceptEdits, kept in its state, must not return.
    bridge = createBridge(
      bridgeOptions(rig, { permissions: { allowedModes: ['default', 'plan'], alwaysAllowScope: 'session' } }),
    );
    await bridge.start();
    since = rig.frames.length;
    await rig.send(userMessage('in-2', 'hello'));
    await rig.waitFor((f) => f.type === 'turn_ended', 60_000, since);
    const args = argsOf(rig.recordedPid());
    expect(args).toContain('--resume');
    expect(args).not.toContain('--permission-mode');
    expect(args).not.toContain('acceptEdits');
  }, 180_000);
});
