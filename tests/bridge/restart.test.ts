/**
 * Restarts: the bridge runs as a real child process and is killed with SIGKILL mid-stream and mid-prompt.
 * The next bridge must adopt the same CLI pid, every event must reach the gateway side exactly once, and
 * no input may reach the CLI twice. Then the CLI itself is killed: the next one resumes the conversation.
 */
import { bash, rule, say } from '@switchyard/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alive,
  type BridgeProcess,
  buildBridge,
  duplicates,
  startBridge as start,
} from './bridge-process.js';
import { createRig, type Rig, userMessage } from './harness.js';

const LONG =
  'This is a long answer that streams slowly so the bridge can be killed in the middle of it. '.repeat(4);

describe('bridge restarts', () => {
  let rig: Rig;
  let bridge: BridgeProcess | undefined;

  const startBridge = async (): Promise<void> => {
    bridge = await start(rig);
  };
  const killBridge = async (): Promise<void> => {
    await bridge?.kill();
  };

  beforeAll(async () => {
    buildBridge();
    rig = await createRig([
      rule('long story', say(LONG, { chunkSize: 6, chunkDelayMs: 15 })),
      rule('write a file', bash('echo hi > out.txt', 'Write a file'), say('Written.')),
      rule('what did I ask', say('You asked for a long story and a file.')),
    ]);
  }, 60_000);

  afterAll(async () => {
    await killBridge();
    await rig?.cleanup();
  });

  it('kill -9 mid-stream and mid-prompt: same CLI adopted, every event once, no input twice', async () => {
    await startBridge();
    await rig.send(userMessage('in-long', 'long story'));
    await rig.waitFor((f) => f.type === 'text_delta', 30_000);
    const pid = rig.recordedPid();
    expect(pid).toBeDefined();
    await killBridge();
    expect(alive(pid as number)).toBe(true);

    await startBridge();
    const ended = await rig.waitFor((f) => f.type === 'turn_ended', 30_000);
    expect(ended).toMatchObject({ outcome: 'success' });
    expect(rig.recordedPid()).toBe(pid);
    expect(
      rig
        .of('text')
        .map((f) => f.text)
        .join(''),
    ).toBe(LONG);
    expect(rig.of('turn_started')).toHaveLength(1);

    // Mid-prompt.
    const since = rig.frames.length;
    await rig.send(userMessage('in-file', 'write a file'));
    const prompt = await rig.waitFor((f) => f.type === 'permission_request', 30_000, since);
    await killBridge();
    await startBridge();
    expect(rig.recordedPid()).toBe(pid);
    if (prompt.type !== 'permission_request') throw new Error('unreachable');
    await rig.send({ type: 'permission_answer', requestId: prompt.requestId, decision: 'allow' });
    const ended2 = await rig.waitFor((f) => f.type === 'turn_ended', 30_000, since);
    expect(ended2).toMatchObject({ outcome: 'success' });
    expect(rig.frames.slice(since).find((f) => f.type === 'tool_finished')).toMatchObject({ isError: false });

    expect(duplicates(rig.frames)).toEqual([]);
    expect(rig.of('permission_request')).toHaveLength(1);
    // No input written twice: each user text opened exactly one turn at the model.
    const opening = (text: string) =>
      rig.model
        .messageRequests()
        .filter((r) => r.view?.kind === 'main' && r.view.step === 0 && r.view.userText?.includes(text));
    expect(opening('long story')).toHaveLength(1);
    expect(opening('write a file')).toHaveLength(1);
  }, 120_000);

  it('kill the CLI: the exit is reported and the next process resumes the conversation', async () => {
    const pid = rig.recordedPid() as number;
    const since = rig.frames.length;
    process.kill(pid, 'SIGKILL');
    await rig.waitFor((f) => f.type === 'operator_event' && f.kind === 'cli_exited', 30_000, since);
    // restartOnExit: a new process with --resume.
    await rig.waitFor((f) => f.type === 'status' && f.state === 'idle', 30_000, since);
    const since2 = rig.frames.length;
    await rig.send(userMessage('in-ask', 'what did I ask'));
    await rig.waitFor((f) => f.type === 'turn_ended', 30_000, since2);
    expect(rig.recordedPid()).not.toBe(pid);
    const last = rig.model.messageRequests().at(-1);
    expect(JSON.stringify(last?.body)).toContain('long story');
  }, 120_000);
});
