/**
 * The bridge in-process against the real claude CLI and the scripted Messages API: everything the
 * recorded fixtures cover, now live. One CLI process runs the scenarios in order (each start costs a
 * second or two on a shared machine); each `it` looks only at the frames after its own start.
 *
 * The CLI runs with `CLAUDE_CODE_MAX_RETRIES=1` so an exhausted 529 fails in under a second, and the
 * bridge with a short stuck watchdog, which the slower steps here (a 1 s tool) stay well inside.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type AppFrame, type FrameOf, parseFrame } from '@switchyard/protocol';
import {
  agent,
  bash,
  hang,
  overloaded,
  rateLimited,
  reply,
  rule,
  say,
  text,
  toolUse,
} from '@switchyard/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Bridge, createBridge } from '../../packages/agent-bridge/src/index.js';
import { bridgeOptions, createRig, type Rig, userMessage } from './harness.js';

const STUCK_AFTER_MS = 3000;
const LONG = 'word '.repeat(200);

describe('bridge scenarios with the real CLI', () => {
  let rig: Rig;
  let bridge: Bridge;

  /** Frames from `since` on, of one type. */
  const after = <T extends AppFrame['type']>(since: number, type: T): FrameOf<T>[] =>
    rig.frames.slice(since).filter((f) => f.type === type) as FrameOf<T>[];
  const waitType = async <T extends AppFrame['type']>(
    type: T,
    since: number,
    where: (f: FrameOf<T>) => boolean = () => true,
    timeoutMs = 30_000,
  ): Promise<FrameOf<T>> =>
    (await rig.waitFor((f) => f.type === type && where(f as FrameOf<T>), timeoutMs, since)) as FrameOf<T>;
  const indexOf = (since: number, predicate: (f: AppFrame) => boolean): number => {
    const at = rig.frames.slice(since).findIndex(predicate);
    return at < 0 ? -1 : since + at;
  };

  beforeAll(async () => {
    rig = await createRig([
      rule(
        'two files',
        reply([
          text('Writing two files.'),
          toolUse('Bash', { command: 'echo a > a.txt', description: 'Write a.txt' }),
          toolUse('Bash', { command: 'echo b > b.txt', description: 'Write b.txt' }),
        ]),
        say('Both written.'),
      ),
      rule('slow thing', bash('sleep 1 && echo done > slow.txt', 'Sleep, then write'), say('Slow done.')),
      rule('also mention', say('Noted your extra message.')),
      // The model takes a second before its first byte: a message written meanwhile went out after the
      // request, so this call never reads it, though its `message_start` comes after the write.
      rule('think first', say('Thought it over.', { startDelayMs: 1000 })),
      rule('meanwhile', say('Answered the late one.')),
      rule('never read', say('Answered the orphan.')),
      rule('long story', say(LONG, { chunkDelayMs: 20, chunkSize: 5 })),
      rule('delegate', agent({ description: 'Write a note', prompt: 'SUB: write a note' }), say('Started.')),
      {
        match: 'SUB: write a note',
        kinds: ['subagent'],
        steps: [
          reply([
            text('Writing the note.'),
            toolUse('Bash', { command: 'echo n > note.txt', description: 'Note' }),
          ]),
          say('Note written.'),
        ],
      },
      rule('<task-notification>', say('The sub-agent wrote the note.')),
      rule('flaky', overloaded(1), say('Answered after a 529.')),
      rule('limited', rateLimited(1, 1), say('Answered after a 429.')),
      rule('broken', overloaded(20)),
      rule('after clear', say('Fresh start.')),
      rule('hang now', hang()),
    ]);
    bridge = createBridge(
      bridgeOptions(rig, {
        env: { ...rig.env, CLAUDE_CODE_MAX_RETRIES: '1' },
        restartOnExit: true,
        stuckAfterMs: STUCK_AFTER_MS,
        stopGraceMs: 2000,
      }),
    );
    await bridge.start();
  });

  afterAll(async () => {
    try {
      // Every frame the bridge sent is a valid protocol frame.
      for (const frame of rig?.frames ?? []) {
        const parsed = parseFrame(frame);
        expect(parsed.ok ? 'ok' : `${frame.type}: ${parsed.message}`).toBe('ok');
      }
    } finally {
      await bridge?.stop('shutdown');
      await rig?.cleanup();
    }
  });

  /** Allows every permission prompt that appears after `since` until `done` resolves. */
  const allowAll = (since: number, done: Promise<unknown>): Promise<void> => {
    let seen = since;
    let finished = false;
    void done.finally(() => {
      finished = true;
    });
    return (async () => {
      while (!finished) {
        const prompt = await Promise.race([
          waitType('permission_request', seen, () => true, 60_000),
          done.then(() => undefined),
        ]);
        if (!prompt) return;
        seen = rig.frames.indexOf(prompt) + 1;
        await rig.send({ type: 'permission_answer', requestId: prompt.requestId, decision: 'allow' });
      }
    })();
  };

  it('two parallel tool calls: two prompts, two tools started and finished, one successful turn', async () => {
    const since = rig.frames.length;
    await rig.send(userMessage('in-par', 'write two files'));
    const ended = waitType('turn_ended', since);
    await allowAll(since, ended);
    expect(await ended).toMatchObject({ outcome: 'success' });
    const started = after(since, 'tool_started');
    expect(started.map((f) => f.input.command)).toEqual(['echo a > a.txt', 'echo b > b.txt']);
    expect(after(since, 'permission_request')).toHaveLength(2);
    const finished = after(since, 'tool_finished');
    expect(finished.map((f) => f.toolUseId).sort()).toEqual(started.map((f) => f.toolUseId).sort());
    expect(finished.every((f) => !f.isError)).toBe(true);
    expect(after(since, 'turn_started')).toHaveLength(1);
    expect(after(since, 'text').at(-1)?.text).toBe('Both written.');
  });

  it('a steer written mid-turn is taken only at the next model call, in the same turn', async () => {
    const since = rig.frames.length;
    await rig.send(userMessage('in-slow', 'do the slow thing'));
    const prompt = await waitType('permission_request', since);
    await rig.send({ type: 'permission_answer', requestId: prompt.requestId, decision: 'allow' });
    // The tool sleeps 1 s: write the steer while it runs.
    await rig.send(userMessage('in-steer', 'also mention this'));
    const beforeCall = rig.frames.length;
    const taken = await waitType('message_taken', since, (f) => f.inboundIds.includes('in-steer'));
    const ended = await waitType('turn_ended', since);
    expect(ended).toMatchObject({ outcome: 'success' });
    const turn = after(since, 'turn_started');
    expect(turn).toHaveLength(1);
    expect(taken.turnId).toBe(turn[0]?.turnId);
    // Not announced before the model call that read it: the tool had finished first.
    const takenAt = rig.frames.indexOf(taken);
    expect(takenAt).toBeGreaterThanOrEqual(beforeCall);
    expect(indexOf(since, (f) => f.type === 'tool_finished')).toBeLessThan(takenAt);
    const request = rig.model.messageRequests().find((r) => r.view?.userTextSource === 'steer');
    expect(request?.view?.userText).toContain('also mention this');
    expect(after(since, 'text').at(-1)?.text).toBe('Noted your extra message.');
  });

  it('a steer written after the last request went out is not taken by that call: it opens the next turn', async () => {
    const since = rig.frames.length;
    await rig.send(userMessage('in-think', 'think first'));
    // Wait for the request to be in (the model holds its answer for a second), then write the steer.
    const deadline = Date.now() + 10_000;
    while (!rig.model.messageRequests().some((r) => r.view?.userText?.includes('think first'))) {
      if (Date.now() > deadline) throw new Error('the request never came');
      await sleep(20);
    }
    await rig.send(userMessage('in-meanwhile', 'and this meanwhile'));
    const second = await waitType('turn_started', since, (f) => f.inboundIds.includes('in-meanwhile'));
    await waitType('turn_ended', since, (f) => f.turnId === second.turnId);
    const taken = after(since, 'message_taken').filter((f) => f.inboundIds.includes('in-meanwhile'));
    // Taken once, by the turn it opened — not by the first turn, whose only call never read it.
    expect(taken.map((f) => f.turnId)).toEqual([second.turnId]);
    const first = after(since, 'turn_started')[0];
    expect(first?.inboundIds).toEqual(['in-think']);
    const texts = after(since, 'text');
    expect(texts.filter((f) => f.turnId === first?.turnId).map((f) => f.text)).toEqual(['Thought it over.']);
    expect(texts.filter((f) => f.turnId === second.turnId).map((f) => f.text)).toEqual([
      'Answered the late one.',
    ]);
  });

  it('a message the CLI never took (it died right after the write) goes to the restarted process, once', async () => {
    const since = rig.frames.length;
    const deadline = Date.now() + 20_000;
    // The live process, idle (the previous test's restart may still be under way).
    while (
      rig.recordedPid() === undefined ||
      rig.recordedPid() !== bridge.status().pid ||
      bridge.status().state !== 'idle'
    ) {
      if (Date.now() > deadline) throw new Error('no idle process');
      await sleep(50);
    }
    // Stopped, the process cannot read the line the bridge writes; then it dies without ever running.
    const pid = rig.recordedPid() as number;
    process.kill(pid, 'SIGSTOP');
    await rig.send(userMessage('in-orphan', 'never read'));
    process.kill(pid, 'SIGKILL');
    // Two ways are right, depending on whether the bridge saw the process die before its write: held for
    // the next process at once, or written, then (no model call took it, the transcript lacks it) written
    // again to the next one after the first turn ends saying so. Either way: answered once, never lost.
    const answered = await waitType('text', since, (f) => f.text === 'Answered the orphan.');
    await waitType('turn_ended', since, (f) => f.turnId === answered.turnId);
    const opened = after(since, 'turn_started').filter((f) => f.inboundIds.includes('in-orphan'));
    for (const turn of opened.filter((t) => t.turnId !== answered.turnId)) {
      const ended = after(since, 'turn_ended').find((f) => f.turnId === turn.turnId);
      expect(ended).toMatchObject({ outcome: 'error', error: expect.stringContaining('restarted') });
    }
    expect(after(since, 'text').filter((f) => f.text === 'Answered the orphan.')).toHaveLength(1);
    expect(rig.of('messages_unread').filter((f) => f.inboundIds.includes('in-orphan'))).toEqual([]);
    const asked = rig.model.messageRequests().filter((r) => r.view?.userText.includes('never read'));
    expect(asked).toHaveLength(1);
  });

  it('an interrupt mid-stream: command_result ok, the turn ends interrupted, the bridge is idle', async () => {
    const since = rig.frames.length;
    await rig.send(userMessage('in-long', 'long story'));
    await waitType('text_delta', since);
    await rig.send({ type: 'interrupt', commandId: 'cmd-stop', route: { chatId: 42 } });
    const result = await waitType('command_result', since, (f) => f.commandId === 'cmd-stop');
    expect(result.ok).toBe(true);
    const ended = await waitType('turn_ended', since);
    expect(ended.outcome).toBe('interrupted');
    await waitType('status', rig.frames.indexOf(ended), (f) => f.state === 'idle');
    expect(bridge.status().state).toBe('idle');
  });

  it('a Task sub-agent: its own tool (with a prompt) under the parent turn, then the turn the CLI starts by itself', async () => {
    const since = rig.frames.length;
    await rig.send(userMessage('in-sub', 'delegate a task'));
    const selfTurn = waitType('turn_started', since, (f) => f.inboundIds.length === 0, 60_000);
    const selfEnded = selfTurn.then((t) =>
      waitType('turn_ended', since, (f) => f.turnId === t.turnId, 60_000),
    );
    await allowAll(since, selfEnded);
    const [opened, parentEnded] = [after(since, 'turn_started')[0], after(since, 'turn_ended')[0]];
    const subagent = after(since, 'subagent_started')[0];
    expect(subagent).toMatchObject({ turnId: opened?.turnId, description: 'Write a note' });
    expect(parentEnded).toMatchObject({ turnId: opened?.turnId, outcome: 'success' });
    const tools = after(since, 'subagent_tool_started');
    expect(tools).toMatchObject([{ agentId: subagent?.agentId, name: 'Bash', turnId: opened?.turnId }]);
    expect(after(since, 'subagent_tool_finished')).toMatchObject([
      { agentId: subagent?.agentId, toolUseId: tools[0]?.toolUseId, isError: false },
    ]);
    // The sub-agent's prompt belongs to the parent turn, even when it comes after that turn's result.
    expect(after(since, 'permission_request')).toMatchObject([
      { turnId: opened?.turnId, route: { chatId: 42 } },
    ]);
    expect(after(since, 'subagent_finished')).toMatchObject([
      { agentId: subagent?.agentId, outcome: 'success' },
    ]);
    // Exactly one more turn: the CLI's own, to the chat that started the work.
    const turns = after(since, 'turn_started');
    expect(turns).toHaveLength(2);
    expect(turns[1]).toMatchObject({ inboundIds: [], route: { chatId: 42 } });
    expect(await selfEnded).toMatchObject({ outcome: 'success' });
    expect(after(since, 'text').at(-1)).toMatchObject({
      turnId: turns[1]?.turnId,
      text: 'The sub-agent wrote the note.',
    });
  });

  it('set_model and set_mode are confirmed only by the CLI; a mode it refuses fails with its reason', async () => {
    const since = rig.frames.length;
    await rig.send({
      type: 'set_model',
      commandId: 'cmd-model',
      route: { chatId: 42 },
      model: 'claude-sonnet-4-5',
    });
    expect(await waitType('command_result', since, (f) => f.commandId === 'cmd-model')).toMatchObject({
      ok: true,
    });
    await rig.send({ type: 'set_mode', commandId: 'cmd-mode', route: { chatId: 42 }, mode: 'acceptEdits' });
    expect(await waitType('command_result', since, (f) => f.commandId === 'cmd-mode')).toMatchObject({
      ok: true,
    });
    await rig.send({
      type: 'set_mode',
      commandId: 'cmd-bypass',
      route: { chatId: 42 },
      mode: 'bypassPermissions',
    });
    const refused = await waitType('command_result', since, (f) => f.commandId === 'cmd-bypass');
    expect(refused.ok).toBe(false);
    expect(refused.message).toBeTruthy();
    await rig.send({ type: 'status_request', commandId: 'cmd-status', route: { chatId: 42 } });
    const status = await waitType('status', since, (f) => f.commandId === 'cmd-status');
    expect(status).toMatchObject({ model: 'claude-sonnet-4-5', mode: 'acceptEdits' });
    const before = rig.model.messageRequests().length;
    await rig.send(userMessage('in-model', 'flaky question'));
    await waitType('turn_ended', since);
    const main = rig.model
      .messageRequests()
      .slice(before)
      .filter((r) => r.view?.kind === 'main');
    expect(main.length).toBeGreaterThan(0);
    expect(main.every((r) => r.view?.model === 'claude-sonnet-4-5')).toBe(true);
    await rig.send({ type: 'set_mode', commandId: 'cmd-mode-back', route: { chatId: 42 }, mode: 'default' });
    await waitType('command_result', since, (f) => f.commandId === 'cmd-mode-back');
  });

  it('API errors: a 529 and a 429 retried are operator events; a 529 that outlasts the retries fails the turn in plain words', async () => {
    // The previous test's turn ("flaky question") already met one 529.
    const flaky = rig.frames.filter((f) => f.type === 'operator_event' && f.kind === 'overloaded');
    expect(flaky.length).toBeGreaterThan(0);
    const since = rig.frames.length;
    await rig.send(userMessage('in-429', 'limited'));
    expect(await waitType('turn_ended', since)).toMatchObject({ outcome: 'success' });
    const limited = after(since, 'operator_event').filter((f) => f.kind === 'rate_limit');
    expect(limited[0]).toMatchObject({ route: { chatId: 42 } });
    expect(limited[0]?.retryAfterMs).toBeGreaterThan(0);

    const since2 = rig.frames.length;
    await rig.send(userMessage('in-broken', 'broken'));
    const failed = await waitType('turn_ended', since2);
    expect(failed.outcome).toBe('error');
    expect(failed.error).toMatch(/^Claude is overloaded right now \(API 529\)/);
    expect(after(since2, 'operator_event').some((f) => f.kind === 'overloaded')).toBe(true);
    // The CLI's own error text (it names the API host) is not sent as the reply.
    expect(after(since2, 'text')).toEqual([]);
  });

  it('/clear during a turn waits for it; a message sent after /clear goes to the new conversation', async () => {
    const since = rig.frames.length;
    const sessionBefore = bridge.status().sessionId;
    await rig.send(userMessage('in-slow2', 'do the slow thing again'));
    const prompt = await waitType('permission_request', since);
    await rig.send({ type: 'permission_answer', requestId: prompt.requestId, decision: 'allow' });
    await rig.send(userMessage('in-s2', 'also mention that'));
    await rig.send({ type: 'clear', commandId: 'cmd-clear', route: { chatId: 42 } });
    await rig.send(userMessage('in-after', 'after clear'));
    const cleared = await waitType('command_result', since, (f) => f.commandId === 'cmd-clear');
    expect(cleared.ok).toBe(true);
    const next = await waitType('turn_started', since, (f) => f.inboundIds.includes('in-after'));
    await waitType('turn_ended', since, (f) => f.turnId === next.turnId);
    // The steer written before /clear was read by the turn it was sent into.
    const first = after(since, 'turn_started')[0];
    expect(after(since, 'message_taken').find((f) => f.inboundIds.includes('in-s2'))?.turnId).toBe(
      first?.turnId,
    );
    // Order: the first turn ended, then /clear, then the new turn.
    const endedAt = indexOf(since, (f) => f.type === 'turn_ended' && f.turnId === first?.turnId);
    expect(endedAt).toBeLessThan(rig.frames.indexOf(cleared));
    expect(rig.frames.indexOf(cleared)).toBeLessThan(rig.frames.indexOf(next));
    expect(after(since, 'messages_unread')).toEqual([]);
    // The model saw the new message without the old conversation.
    const request = rig.model.messageRequests().find((r) => r.view?.userText.includes('after clear'));
    expect(JSON.stringify(request?.body)).not.toContain('slow thing');
    expect(bridge.status().sessionId).not.toBe(sessionBefore);
  });

  it('stuck: no output for stuckAfterMs is reported; held /clear and message outlive the CLI and run in the next one', async () => {
    const since = rig.frames.length;
    await rig.send(userMessage('in-hang', 'hang now'));
    const turn = await waitType('turn_started', since);
    const stuck = await waitType('operator_event', since, (f) => f.kind === 'stuck', STUCK_AFTER_MS + 10_000);
    expect(stuck).toMatchObject({ turnId: turn.turnId, route: { chatId: 42 } });
    expect(stuck.message).toContain('/stop');
    // Only this turn was ever reported stuck (the 1 s tool earlier stayed inside the limit).
    expect(rig.frames.filter((f) => f.type === 'operator_event' && f.kind === 'stuck')).toHaveLength(1);
    // Held behind the hung turn, then the process dies: the hung turn fails, and what was held is kept
    // for the process started next (restartOnExit), in order — nothing is dropped.
    await rig.send({ type: 'clear', commandId: 'cmd-clear2', route: { chatId: 42 } });
    await rig.send(userMessage('in-held', 'held message'));
    await sleep(200);
    const pid = rig.recordedPid() as number;
    process.kill(pid, 'SIGKILL');
    expect(await waitType('turn_ended', since, (f) => f.turnId === turn.turnId)).toMatchObject({
      outcome: 'error',
    });
    await waitType('operator_event', since, (f) => f.kind === 'cli_exited');
    expect(await waitType('command_result', since, (f) => f.commandId === 'cmd-clear2')).toMatchObject({
      ok: true,
    });
    const held = await waitType('turn_started', since, (f) => f.inboundIds.includes('in-held'));
    await waitType('turn_ended', since, (f) => f.turnId === held.turnId);
    expect(rig.of('messages_unread').filter((f) => f.inboundIds.includes('in-held'))).toEqual([]);
  });
});
