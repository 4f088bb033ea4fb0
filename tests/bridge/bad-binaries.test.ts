/**
 * The bridge's failure reports for a missing or instantly-exiting binary, a crash loop, and a real stop
 * of a recorded process that ignores SIGTERM (bridges and stand-in CLIs as real processes).
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CONVERSATIONS_DIR,
  conversationDir,
  createBridge,
  readStartTime,
  stopRecordedClaude,
} from '../../packages/agent-bridge/src/index.js';
import { createRig, type Rig, userMessage } from './harness.js';

describe('bad binaries', () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.cleanup();
    rig = undefined;
  });

  it('a missing binary is reported naming the path; one that exits at once has its stderr reported', async () => {
    rig = await createRig([]);
    const missing = createBridge({
      agent: 'test',
      socketPath: rig.socketPath,
      stateDir: join(rig.root, 's1'),
      workDir: rig.workDir,
      claudeBin: '/nonexistent/claude',
      restartOnExit: false,
      stuckAfterMs: 60_000,
    });
    await missing.start();
    // Processes start per conversation, at its first message.
    await rig.send(userMessage('bad-1', 'hello'));
    const event = await rig.waitFor((f) => f.type === 'operator_event' && f.kind === 'cli_missing');
    expect(event.type === 'operator_event' && event.message).toContain('/nonexistent/claude');
    expect(missing.status().state).toBe('exited');
    await missing.stop('shutdown');
    // A rig of its own: this gateway side has sent `bad-1` already, and a bridge with a fresh state
    // directory starts its duplicate filter over (the channel's resync is tested in the protocol).
    await rig.cleanup();
    rig = await createRig([]);

    const script = join(rig.root, 'bad-claude');
    writeFileSync(script, '#!/bin/sh\necho "error: not logged in, run claude login" >&2\nexit 3\n');
    chmodSync(script, 0o755);
    const since = rig.frames.length;
    const failing = createBridge({
      agent: 'test',
      socketPath: rig.socketPath,
      stateDir: join(rig.root, 's2'),
      workDir: rig.workDir,
      claudeBin: script,
      restartOnExit: true,
      stuckAfterMs: 60_000,
      crashLoop: { maxExits: 2, windowMs: 60_000 },
    });
    await failing.start();
    await rig.send(userMessage('bad-2', 'hello'));
    const exited = await rig.waitFor(
      (f) => f.type === 'operator_event' && f.kind === 'cli_exited',
      20_000,
      since,
    );
    expect(exited.type === 'operator_event' && exited.message).toContain('not logged in');
    // Restarted with backoff until the crash loop is detected, then left alone.
    await rig.waitFor((f) => f.type === 'operator_event' && f.kind === 'crash_loop', 20_000, since);
    await failing.stop('shutdown');
    const conversation = join(rig.root, 's2', CONVERSATIONS_DIR, conversationDir('42'));
    expect(JSON.parse(readFileSync(join(conversation, 'bridge.json'), 'utf8')).crashLoop).toBe(true);
  }, 40_000);

  it('stopRecordedClaude: SIGTERM ignored → SIGKILL after the grace, record cleared; then not_running', async () => {
    rig = await createRig([]);
    const script = join(rig.root, 'stubborn-claude');
    // Ignores SIGTERM (inherited by its children), so only the SIGKILL after the grace ends it.
    writeFileSync(script, "#!/bin/sh\ntrap '' TERM\nwhile :; do sleep 1; done\n");
    chmodSync(script, 0o755);
    const stateDir = join(rig.root, 's3');
    const bridge = createBridge({
      agent: 'test',
      socketPath: rig.socketPath,
      stateDir,
      workDir: rig.workDir,
      claudeBin: script,
      restartOnExit: false,
      stuckAfterMs: 60_000,
    });
    await bridge.start();
    await rig.sendAcked(userMessage('stubborn-1', 'hello'));
    const pid = bridge.status().pid as number;
    await bridge.stop('restart');
    const conversation = join(stateDir, CONVERSATIONS_DIR, conversationDir('42'));
    const record = () => JSON.parse(readFileSync(join(conversation, 'bridge.json'), 'utf8')).child;
    expect(record()?.pid).toBe(pid);
    const started = Date.now();
    expect(await stopRecordedClaude({ stateDir: conversation, graceMs: 300 })).toBe('stopped');
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    // Gone, or a zombie until this process (its parent) reaps it.
    const after = readStartTime(pid);
    expect(!after.ok || after.zombie).toBe(true);
    expect(record()).toBeUndefined();
    expect(await stopRecordedClaude({ stateDir: conversation })).toBe('not_running');
    expect(await stopRecordedClaude({ stateDir: join(rig.root, 'nothing-here') })).toBe('not_running');
  }, 20_000);
});
