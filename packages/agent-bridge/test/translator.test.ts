/**
 * The translator and the session machine on stdout recorded from the pinned real CLI (test/fixtures).
 * Every frame produced must pass the protocol's own schema; each scenario checks what it is about.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AppFrame, parseFrame } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { LIMIT_RESET_TEXT } from '../src/core/session/limit.js';
import { Session } from '../src/core/session/session.js';
import { translateLine } from '../src/core/translate/translator.js';
import { renderUserMessage } from '../src/io/delivery/user-input.js';
import { userMessage } from './frames.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const scenarios = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.stdout.jsonl'))
  .map((name) => name.slice(0, -'.stdout.jsonl'.length));

const linesOf = (scenario: string): string[] =>
  readFileSync(join(FIXTURES, `${scenario}.stdout.jsonl`), 'utf8')
    .split('\n')
    .filter((l) => l !== '');

/** Runs a recorded stdout through a session that opened the turn with one message, as the bridge does. */
function run(
  scenario: string,
  hook?: (index: number, line: string, session: Session, frames: AppFrame[]) => void,
): AppFrame[] {
  const session = new Session();
  const frames: AppFrame[] = [...session.processStarted().frames];
  frames.push(...session.acceptUserMessage(userMessage('in-1', 'go'), 1).frames);
  linesOf(scenario).forEach((line, index) => {
    hook?.(index, line, session, frames);
    frames.push(...session.onEvents(translateLine(line), 2).frames);
  });
  return frames;
}

type Line = { message: { content: unknown[] } };

/** The CLI's echo of lines the bridge wrote: the same messages, `isReplay`, as a model call takes them. */
const echo = (...ids: string[]): string =>
  JSON.stringify({
    type: 'user',
    isReplay: true,
    parent_tool_use_id: null,
    message: {
      role: 'user',
      content: ids.flatMap(
        (id) => (JSON.parse(renderUserMessage(userMessage(id, `text of ${id}`))) as Line).message.content,
      ),
    },
  });

/** A main-agent model call's response beginning (`message_start`). */
const start = (id: string): string =>
  JSON.stringify({
    type: 'stream_event',
    parent_tool_use_id: null,
    event: { type: 'message_start', message: { id } },
  });

describe('translator on recorded output', () => {
  it.each(scenarios)('%s: every line translates, every frame is valid', (scenario) => {
    for (const line of linesOf(scenario)) {
      const events = translateLine(line);
      expect(events.filter((e) => e.kind === 'skipped')).toEqual([]);
    }
    for (const frame of run(scenario)) {
      const parsed = parseFrame(frame);
      expect(parsed.ok ? 'ok' : parsed.message).toBe('ok');
    }
  });

  it('streamed-answer: deltas add up to the consolidated text; one turn, success', () => {
    const frames = run('streamed-answer');
    const deltas = frames.flatMap((f) => (f.type === 'text_delta' ? [f.delta] : [])).join('');
    const text = frames.flatMap((f) => (f.type === 'text' ? [f.text] : [])).join('');
    expect(text.length).toBeGreaterThan(0);
    expect(deltas).toBe(text);
    expect(frames.filter((f) => f.type === 'turn_ended')).toMatchObject([{ outcome: 'success' }]);
  });

  it('permission-allowed: a prompt with the tool, a summary and the CLI suggestions as labels', () => {
    const prompt = run('permission-allowed').find((f) => f.type === 'permission_request');
    expect(prompt).toMatchObject({ toolName: 'Bash', route: { chatId: 42 } });
    if (prompt?.type !== 'permission_request') throw new Error('no prompt');
    // The model's own description comes first, labelled; the command after it, whole.
    expect(prompt.summary).toBe('run this command (described as: Write a file): echo hi > out.txt');
    expect(prompt.suggestions.length).toBeGreaterThan(0);
  });

  it('ask-user-question: becomes a question frame with options', () => {
    const question = run('ask-user-question').find((f) => f.type === 'question');
    if (question?.type !== 'question') throw new Error('no question');
    expect(question.questions[0]?.options.length).toBeGreaterThan(0);
  });

  it('subagent: started, its tools keyed by the Task id, finished after the parent turn; the CLI then starts a turn by itself', () => {
    const frames = run('subagent');
    const started = frames.find((f) => f.type === 'subagent_started');
    if (started?.type !== 'subagent_started') throw new Error('no sub-agent');
    const tools = frames.filter((f) => f.type === 'subagent_tool_started');
    expect(tools.length).toBeGreaterThan(0);
    expect(
      tools.every(
        (f) =>
          f.type === 'subagent_tool_started' && f.agentId === started.agentId && f.turnId === started.turnId,
      ),
    ).toBe(true);
    const firstEnd = frames.findIndex((f) => f.type === 'turn_ended');
    const finished = frames.findIndex((f) => f.type === 'subagent_finished');
    expect(finished).toBeGreaterThan(firstEnd);
    const turns = frames.filter((f) => f.type === 'turn_started');
    expect(turns).toHaveLength(2);
    // The turn nobody typed goes to the chat that started the work.
    expect(turns[1]).toMatchObject({ inboundIds: [], route: { chatId: 42 } });
    expect(frames.filter((f) => f.type === 'turn_ended')).toHaveLength(2);
  });

  it('a steer written after the last model call opens the next turn at the turn end (the CLI answers it in a turn of its own)', () => {
    // Measured on 2.1.328: such a message is not folded into the ending turn; after `result` the CLI
    // starts a new turn with it. So it is announced there, as that turn's opening message.
    const lines = linesOf('streamed-answer');
    const resultAt = lines.findIndex((l) => l.includes('"type":"result"'));
    const frames = run('streamed-answer', (index, _line, session, out) => {
      if (index === resultAt) out.push(...session.acceptUserMessage(userMessage('in-late', 'and'), 3).frames);
    });
    const ended = frames.findIndex((f) => f.type === 'turn_ended');
    const next = frames.findIndex((f) => f.type === 'turn_started' && f.inboundIds.includes('in-late'));
    const taken = frames.findIndex((f) => f.type === 'message_taken' && f.inboundIds.includes('in-late'));
    expect(ended).toBeGreaterThan(-1);
    expect(next).toBeGreaterThan(ended);
    expect(taken).toBeGreaterThan(next);
    const opened = frames[next];
    expect(opened?.type === 'turn_started' && opened.request).toBe('and');
  });

  it('a process that echoes its input (--replay-user-messages): a steer is taken at its echo, not at a message_start read after the write', () => {
    expect(translateLine(echo('in-a', 'in-b'))).toEqual([
      { kind: 'input_taken', inboundIds: ['in-a', 'in-b'] },
    ]);
    // A sub-agent's own prompt, and a message that is not a Telegram one, name nothing.
    expect(
      translateLine(echo('in-a').replace('"parent_tool_use_id":null', '"parent_tool_use_id":"toolu_1"')),
    ).toEqual([]);
    expect(translateLine(echo('in-a').replace('[telegram ', '[note '))).toEqual([]);

    const session = new Session();
    const frames: AppFrame[] = [...session.processStarted().frames];
    const feed = (line: string) => frames.push(...session.onEvents(translateLine(line), 2).frames);
    frames.push(...session.acceptUserMessage(userMessage('in-1', 'go'), 1).frames);
    frames.push(...session.acceptUserMessage(userMessage('in-mid', 'also'), 1).frames);
    frames.push(...session.acceptUserMessage(userMessage('in-late', 'and'), 1).frames);
    // The call in flight when they were written starts streaming: it read neither.
    feed(start('msg_1'));
    expect(frames.filter((f) => f.type === 'message_taken').map((f) => f.inboundIds)).toEqual([['in-1']]);
    // The next call takes the first of them: its echo comes before that call's message_start.
    feed(echo('in-mid'));
    feed(start('msg_2'));
    const turnId = frames.find((f) => f.type === 'turn_started')?.turnId;
    expect(frames.filter((f) => f.type === 'message_taken').slice(1)).toEqual([
      { type: 'message_taken', turnId, inboundIds: ['in-mid'] },
    ]);
    // The turn ends without taking the other: it opens the next turn.
    feed(linesOf('streamed-answer').find((l) => l.includes('"type":"result"')) as string);
    const next = frames.filter((f) => f.type === 'turn_started').at(-1);
    expect(next).toMatchObject({ inboundIds: ['in-late'], request: 'and' });
    // The CLI's echo when that turn takes it changes nothing more.
    const count = frames.length;
    feed(echo('in-late'));
    expect(frames.slice(count).filter((f) => f.type === 'message_taken')).toEqual([]);
    for (const frame of frames) expect(parseFrame(frame).ok).toBe(true);
  });

  it('two messages that waited for the same turn end are read one turn each: the second keeps a turn open until the CLI reads it', () => {
    // The soak lost an answer here: both written while turn 1 ran, both announced for the turn opened at its
    // end; the CLI read only the first in that turn (the second came during its one call) and started one
    // more turn for the second. Between those two turns this side saw no turn running, so the pool stopped
    // the process for a slot while the CLI was asking the model, and the second answer never came.
    const result = linesOf('streamed-answer').find((l) => l.includes('"type":"result"')) as string;
    const session = new Session();
    const frames: AppFrame[] = [...session.processStarted().frames];
    const feed = (line: string) => frames.push(...session.onEvents(translateLine(line), 2).frames);
    frames.push(...session.acceptUserMessage(userMessage('in-1', 'go'), 1).frames);
    feed(start('msg_1'));
    frames.push(...session.acceptUserMessage(userMessage('in-2', 'two'), 1).frames);
    frames.push(...session.acceptUserMessage(userMessage('in-3', 'three'), 1).frames);
    feed(result);
    const second = frames.filter((f) => f.type === 'turn_started').at(-1);
    expect(second).toMatchObject({ inboundIds: ['in-2', 'in-3'] });
    // The CLI's next turn reads only in-2.
    feed(echo('in-2'));
    feed(start('msg_2'));
    feed(result);
    // in-3 is still unread: a turn stays open for it (the process is not idle, nor stoppable).
    expect(session.running).toBe(true);
    const third = frames.filter((f) => f.type === 'turn_started').at(-1);
    expect(third).toMatchObject({ inboundIds: ['in-3'] });
    expect(third?.type === 'turn_started' && third.turnId).not.toBe(
      second?.type === 'turn_started' && second.turnId,
    );
    feed(echo('in-3'));
    feed(start('msg_3'));
    feed(result);
    expect(session.running).toBe(false);
    // A turn that reads nothing (its one call failed before any echo) claims no more turns after it.
    frames.push(...session.acceptUserMessage(userMessage('in-4', 'four'), 3).frames);
    feed(start('msg_4'));
    frames.push(...session.acceptUserMessage(userMessage('in-5', 'five'), 3).frames);
    feed(result);
    expect(session.running).toBe(true);
    feed(result);
    expect(session.running).toBe(false);
    for (const frame of frames) expect(parseFrame(frame).ok).toBe(true);
  });

  it('a new process after one nobody saw end (stop-claude with no bridge running): its open turn and prompts are reported first', () => {
    const session = new Session();
    session.processStarted();
    const opened = session
      .acceptUserMessage(userMessage('in-1', 'go'), 1)
      .frames.find((f) => f.type === 'turn_started');
    session.acceptUserMessage(userMessage('in-2', 'and'), 1);
    // The record was cleared under the bridge: the next thing it sees is a new process.
    const frames = session.processStarted().frames;
    expect(frames).toContainEqual(
      expect.objectContaining({
        type: 'turn_ended',
        turnId: opened?.type === 'turn_started' && opened.turnId,
        outcome: 'error',
      }),
    );
    expect(frames).toContainEqual(expect.objectContaining({ type: 'messages_unread', inboundIds: ['in-2'] }));
    expect(frames.at(-1)).toMatchObject({ type: 'status', state: 'idle' });
    expect(session.running).toBe(false);
    // A process started after a seen exit reports nothing twice.
    expect(session.processStarted().frames.filter((f) => f.type !== 'status')).toEqual([]);
  });

  it('a process that dies before a model call took a message: written again to the next one unless the transcript has it', () => {
    const session = new Session();
    session.processStarted();
    const first = userMessage('in-open', 'go');
    const steer = userMessage('in-steer', 'also');
    const opened = session.acceptUserMessage(first, 1).frames.find((f) => f.type === 'turn_started');
    session.acceptUserMessage(steer, 1);
    const inTranscript = (id: string) => id === 'in-steer';
    const exited = session.processExited('gone', { restarting: true, inTranscript });
    expect(exited.redeliver).toEqual([first]);
    expect(exited.frames.find((f) => f.type === 'turn_ended')).toMatchObject({
      turnId: opened?.turnId,
      outcome: 'error',
      error: expect.stringContaining('restarted'),
    });
    // The steer the transcript has is reported as before; the re-sent one is not.
    expect(exited.frames.filter((f) => f.type === 'messages_unread').map((f) => f.inboundIds)).toEqual([
      ['in-steer'],
    ]);
    // With no process to come, everything is reported.
    const alone = new Session();
    alone.processStarted();
    alone.acceptUserMessage(first, 1);
    const stopped = alone.processExited('gone', { restarting: false });
    expect(stopped.redeliver).toBeUndefined();
    expect(stopped.frames.find((f) => f.type === 'turn_ended')).toMatchObject({
      error: 'The Claude process exited in the middle of this turn.',
    });
  });

  it("api-529-exhausted: the CLI's API error text is an operator event, not a reply; the turn fails in plain words", () => {
    const frames = run('api-529-exhausted');
    expect(frames.filter((f) => f.type === 'text')).toEqual([]);
    expect(
      frames.filter((f) => f.type === 'operator_event').map((f) => f.type === 'operator_event' && f.kind),
    ).toContain('overloaded');
    const ended = frames.find((f) => f.type === 'turn_ended');
    expect(ended).toMatchObject({ outcome: 'error' });
    expect(ended?.type === 'turn_ended' && ended.error).toMatch(
      /^Claude is overloaded right now \(API 529\)/,
    );
    expect(ended?.type === 'turn_ended' && ended.error).not.toContain('127.0.0.1');
  });

  it("usage-limit-oauth: the refusal, the CLI's limit text and the refused result are one usage limit", () => {
    const lines = linesOf('usage-limit-oauth');
    const limit = { kind: 'usage_limit', resetsAt: 1_796_201_748_000, limitType: 'five_hour' };
    expect(translateLine(lines[2] as string)).toEqual([limit]);
    // The synthetic "You've hit your limit · resets …" message: the limit again, not an API error or a reply.
    expect(translateLine(lines[3] as string)).toEqual([limit]);
    expect(translateLine(lines[7] as string)).toEqual([limit]);
    expect(translateLine(lines[4] as string)).toEqual([
      expect.objectContaining({ kind: 'result', isError: true, usageLimited: true }),
    ]);
    // `allowed` after the reset is informational.
    expect(translateLine(lines[18] as string)).toEqual([]);
  });

  it('usage-limit-oauth: the refused turn waits, open, with its steer read; at the reset the CLI is told to go on and the same turn answers', () => {
    const lines = linesOf('usage-limit-oauth');
    const session = new Session();
    const frames: AppFrame[] = [...session.processStarted().frames];
    frames.push(...session.acceptUserMessage(userMessage('in-1', 'first question'), 1).frames);
    const turnId = frames.find((f) => f.type === 'turn_started')?.turnId;
    lines.slice(0, 9).forEach((line, index) => {
      // The second message was written while the first turn ran, before the limit was known.
      if (index === 1)
        frames.push(...session.acceptUserMessage(userMessage('in-2', 'second question'), 2).frames);
      frames.push(...session.onEvents(translateLine(line), 3).frames);
    });
    expect(frames.filter((f) => f.type === 'usage_limit')).toEqual([
      {
        type: 'usage_limit',
        route: { chatId: 42 },
        turnId,
        state: 'limited',
        resetsAt: 1_796_201_748_000,
        limitType: 'five_hour',
      },
    ]);
    expect(
      frames.filter((f) => ['turn_ended', 'operator_event', 'text', 'messages_unread'].includes(f.type)),
    ).toEqual([]);
    expect(frames.filter((f) => f.type === 'turn_started')).toHaveLength(1);
    expect(frames).toContainEqual({ type: 'message_taken', turnId, inboundIds: ['in-2'] });
    expect(session.agentState()).toBe('limited');
    expect(session.limitedUntil).toBe(1_796_201_748_000);

    expect(session.limitReset(1_796_201_747_999, false)).toBeUndefined();
    const reset = session.limitReset(1_796_201_748_000, false);
    expect(reset?.writes.map((w) => JSON.parse(w).message.content)).toEqual([LIMIT_RESET_TEXT]);
    expect(reset?.frames[0]).toMatchObject({ type: 'usage_limit', state: 'resumed', turnId });
    expect(session.limitedUntil).toBeUndefined();

    const after: AppFrame[] = [];
    for (const line of lines.slice(9)) after.push(...session.onEvents(translateLine(line), 4).frames);
    expect(after.find((f) => f.type === 'text')).toMatchObject({ turnId, text: 'answer 3' });
    expect(after.find((f) => f.type === 'turn_ended')).toMatchObject({ turnId, outcome: 'success' });
    expect(after.filter((f) => f.type === 'turn_started')).toEqual([]);
    for (const frame of [...frames, ...after, ...(reset?.frames ?? [])])
      expect(parseFrame(frame).ok).toBe(true);
  });

  it('usage-limit-oauth, /stop during the wait: the waiting turn ends as interrupted with nothing written to the CLI', () => {
    const session = new Session();
    const frames: AppFrame[] = [...session.processStarted().frames];
    frames.push(...session.acceptUserMessage(userMessage('in-1', 'first question'), 1).frames);
    for (const line of linesOf('usage-limit-oauth').slice(0, 5)) session.onEvents(translateLine(line), 2);
    const turnId = frames.find((f) => f.type === 'turn_started')?.turnId;
    const stopped = session.stopLimitWait('cmd-stop');
    expect(stopped?.writes).toEqual([]);
    expect(stopped?.frames.slice(0, 3)).toEqual([
      expect.objectContaining({ type: 'usage_limit', state: 'resumed', turnId }),
      { type: 'turn_ended', turnId, outcome: 'interrupted' },
      { type: 'command_result', commandId: 'cmd-stop', ok: true },
    ]);
    expect(session.running).toBe(false);
    expect(session.limitedUntil).toBeUndefined();
    expect(session.stopLimitWait('cmd-again')).toBeUndefined();
  });

  it('usage-limit-oauth with the wait turned off (waitOutUsageLimit: false): the turn fails as any API error does', () => {
    const session = new Session(undefined, { waitOutUsageLimit: false });
    const frames: AppFrame[] = [...session.processStarted().frames];
    frames.push(...session.acceptUserMessage(userMessage('in-1', 'first question'), 1).frames);
    for (const line of linesOf('usage-limit-oauth').slice(0, 5))
      frames.push(...session.onEvents(translateLine(line), 1_796_201_700_000).frames);
    expect(frames.filter((f) => f.type === 'usage_limit')).toEqual([]);
    expect(frames.find((f) => f.type === 'operator_event')).toMatchObject({
      kind: 'rate_limit',
      retryAfterMs: 48_000,
    });
    expect(frames.find((f) => f.type === 'turn_ended')).toMatchObject({ outcome: 'error' });
    expect(session.limitedUntil).toBeUndefined();
  });

  it('api-529 and api-429: operator events with the right kind and a retry delay', () => {
    const overloaded = run('api-529').filter((f) => f.type === 'operator_event');
    expect(overloaded[0]).toMatchObject({ kind: 'overloaded' });
    const limited = run('api-429').filter((f) => f.type === 'operator_event');
    expect(limited[0]).toMatchObject({ kind: 'rate_limit' });
    expect(limited[0]?.type === 'operator_event' && limited[0].retryAfterMs).toBeGreaterThan(0);
  });

  it('initialize while a prompt is open: the pending request is re-offered when this side lost it', () => {
    const session = new Session();
    session.processStarted();
    const line = linesOf('initialize-while-prompt-open').find((l) =>
      l.includes('pending_permission_requests'),
    );
    if (!line) throw new Error('fixture lacks the initialize response');
    // A bridge that lost the prompt sent `initialize`; answer it with the recorded response.
    const write = session.control('initialize', undefined).writes[0] as string;
    const ourId = (JSON.parse(write) as { request_id: string }).request_id;
    const recorded = line.replace(/"request_id":"req_initialize_1"/, `"request_id":"${ourId}"`);
    const frames = session.onEvents(translateLine(recorded), 1).frames;
    expect(frames.find((f) => f.type === 'permission_request')).toMatchObject({ toolName: 'Bash' });
  });

  it('regression (restart.test flake): a prompt answered while `initialize` was in flight is not offered again', () => {
    // The adopting bridge writes `initialize`, the gateway answers the prompt at once, and only then does
    // the CLI's `initialize` answer arrive — listing the prompt as it was when the CLI read the request.
    const lines = linesOf('initialize-while-prompt-open');
    const session = new Session();
    session.processStarted();
    session.acceptUserMessage(userMessage('in-1', 'go'), 1);
    const promptLine = lines.find((l) => l.includes('"subtype":"can_use_tool"')) as string;
    const prompt = session
      .onEvents(translateLine(promptLine), 1)
      .frames.find((f) => f.type === 'permission_request');
    if (prompt?.type !== 'permission_request') throw new Error('no prompt');
    const write = session.control('initialize', undefined).writes[0] as string;
    const ourId = (JSON.parse(write) as { request_id: string }).request_id;
    expect(
      session.answer({ type: 'permission_answer', requestId: prompt.requestId, decision: 'allow' }),
    ).toBeDefined();
    const response = (lines.find((l) => l.includes('pending_permission_requests')) as string).replace(
      /"request_id":"req_initialize_1"/,
      `"request_id":"${ourId}"`,
    );
    const frames = session.onEvents(translateLine(response), 2).frames;
    expect(frames.filter((f) => f.type === 'permission_request')).toEqual([]);
    expect(session.agentState()).toBe('running');
  });

  it('delivery-receipts: a read receipt per uuid line in stdin order, before a later fence is answered; a repeated uuid gets none', () => {
    // What `Delivery.settle` relies on (delivery.ts): `queued` on read, in order with control requests, and
    // silence for a uuid the CLI has taken already (mid-turn, and after its turn ended).
    const order = linesOf('delivery-receipts').flatMap((line) =>
      translateLine(line).flatMap((e) =>
        e.kind === 'input_queued'
          ? [`queued ${e.uuid.slice(-1)}`]
          : e.kind === 'control_response'
            ? [`answered ${e.requestId}`]
            : [],
      ),
    );
    expect(order).toEqual([
      'queued 1',
      'queued 2',
      'queued 3',
      'answered req_fence_1',
      'answered req_fence_2',
    ]);
    // The steer was read long before the turn took it: its receipt comes before the tool's result.
    const lines = linesOf('delivery-receipts');
    const receipt = lines.findIndex((l) =>
      translateLine(l).some((e) => e.kind === 'input_queued' && e.uuid.endsWith('3')),
    );
    const toolResult = lines.findIndex((l) => translateLine(l).some((e) => e.kind === 'tool_result'));
    expect(receipt).toBeLessThan(toolResult);
    // Receipts change nothing a user sees: one turn per opening message, the steer in the second.
    const frames = run('delivery-receipts');
    expect(frames.filter((f) => f.type === 'turn_ended')).toHaveLength(2);
  });

  it('bad input: malformed lines, a 3 MB line and unknown types are skipped; an unknown control request is refused', () => {
    expect(translateLine('{not json')).toEqual([{ kind: 'skipped', reason: 'malformed', bytes: 9 }]);
    expect(translateLine('[1,2]')[0]).toMatchObject({ kind: 'skipped' });
    const big = JSON.stringify({ type: 'assistant', pad: 'x'.repeat(3 * 1024 * 1024) });
    expect(translateLine(big)).toEqual([{ kind: 'skipped', reason: 'oversized', bytes: big.length }]);
    expect(translateLine('{"type":"brand_new_thing","x":1}')).toEqual([]);
    const session = new Session();
    session.processStarted();
    const step = session.onEvents(
      translateLine('{"type":"control_request","request_id":"r1","request":{"subtype":"hook_callback"}}'),
      1,
    );
    expect(JSON.parse(step.writes[0] as string)).toMatchObject({
      type: 'control_response',
      response: { subtype: 'error', request_id: 'r1' },
    });
  });
});
