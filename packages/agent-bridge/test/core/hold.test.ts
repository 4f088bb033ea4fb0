/**
 * The hold rules as tables: an arriving message or command is held or written; held items are released
 * in order into a CLI that may take them; a write a crash interrupted is settled on a manual clock (the
 * fence, its answer, its deadline — the wake-up) before anything held overtakes it.
 */
import { type FrameOf, ManualClock, type Route } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import {
  droppedFrames,
  EMPTY_HOLD,
  FENCE_TIMEOUT_MS,
  type HeldFrame,
  type HoldAction,
  type HoldEvent,
  type HoldState,
  holdStep,
} from '../../src/core/delivery/hold.js';

const chat: Route = { chatId: 1 };
const message = (id: string, route: Route = chat): FrameOf<'user_message'> => ({
  type: 'user_message',
  inboundId: id,
  route,
  telegramMessageId: 1,
  sender: { id: 1, name: 'Ann' },
  text: id,
  attachments: [],
  sentAt: 0,
});
const clear: FrameOf<'clear'> = { type: 'clear', commandId: 'c1', route: chat };
const compact: FrameOf<'compact'> = { type: 'compact', commandId: 'c2', route: chat };
const held = (...frames: HeldFrame[]): HoldState => ({ held: frames, settling: undefined });
const names = (actions: readonly HoldAction[]) =>
  actions.map((a) =>
    'frame' in a ? `${a.kind} ${a.frame.type === 'user_message' ? a.frame.inboundId : a.frame.type}` : a.kind,
  );

describe('hold rules: an arriving message or command', () => {
  it.each([
    {
      name: 'message, idle, nothing held: written',
      state: EMPTY_HOLD,
      frame: message('m'),
      turn: undefined,
      shared: false,
      want: 'write',
    },
    {
      name: 'message while a turn runs (per chat): written, a steer',
      state: EMPTY_HOLD,
      frame: message('m'),
      turn: chat,
      shared: false,
      want: 'write',
    },
    {
      name: 'message behind something held: held',
      state: held(clear),
      frame: message('m'),
      turn: undefined,
      shared: false,
      want: 'hold',
    },
    {
      name: 'shared, a turn of another chat: held',
      state: EMPTY_HOLD,
      frame: message('m'),
      turn: { chatId: 2 },
      shared: true,
      want: 'hold',
    },
    {
      name: 'shared, a turn of another topic: held',
      state: EMPTY_HOLD,
      frame: message('m'),
      turn: { chatId: 1, threadId: 9 },
      shared: true,
      want: 'hold',
    },
    {
      name: 'shared, a turn of the same chat: steered',
      state: EMPTY_HOLD,
      frame: message('m'),
      turn: chat,
      shared: true,
      want: 'write',
    },
    {
      name: '/clear into an idle CLI: written',
      state: EMPTY_HOLD,
      frame: clear,
      turn: undefined,
      shared: false,
      want: 'write',
    },
    {
      name: '/clear while a turn runs: held',
      state: EMPTY_HOLD,
      frame: clear,
      turn: chat,
      shared: false,
      want: 'hold',
    },
    {
      name: '/compact behind something held: held',
      state: held(message('m')),
      frame: compact,
      turn: undefined,
      shared: false,
      want: 'hold',
    },
    {
      name: 'message while the usage limit is waited out: held, not sent into the same refusal',
      state: EMPTY_HOLD,
      frame: message('m'),
      turn: chat,
      shared: false,
      limited: true,
      want: 'hold',
    },
    {
      name: '/clear while the usage limit is waited out: held',
      state: EMPTY_HOLD,
      frame: clear,
      turn: undefined,
      shared: false,
      limited: true,
      want: 'hold',
    },
  ])('$name', ({ state, frame, turn, shared, want, ...rest }) => {
    const limited = 'limited' in rest ? rest.limited : undefined;
    const step = holdStep(state, {
      kind: 'arrived',
      frame,
      turnRoute: turn,
      shared,
      ...(limited !== undefined ? { limited } : {}),
    });
    expect(step.actions).toEqual([{ kind: want, frame }]);
    expect(step.state.held).toEqual(want === 'hold' ? [...state.held, frame] : state.held);
    expect(step.wakeAt).toBeUndefined();
  });
});

describe('hold rules: release', () => {
  const ready = { writable: true, idle: true };
  it.each([
    { name: 'nothing held', state: EMPTY_HOLD, view: ready, out: [], left: 0 },
    {
      name: 'messages into an idle CLI: all, in order',
      state: held(message('a'), message('b')),
      view: ready,
      out: ['release a', 'release b'],
      left: 0,
    },
    {
      name: 'messages while a turn runs: they go in (steers after the released command)',
      state: held(message('a')),
      view: { writable: true, idle: false },
      out: ['release a'],
      left: 0,
    },
    {
      name: 'a command into an idle CLI, and the messages after it',
      state: held(clear, message('a')),
      view: ready,
      out: ['release clear', 'release a'],
      left: 0,
    },
    {
      name: 'a message then a command: the command waits for the turn the message opens',
      state: held(message('a'), clear, message('b')),
      view: ready,
      out: ['release a'],
      left: 2,
    },
    {
      name: 'two commands: one per release',
      state: held(clear, compact),
      view: ready,
      out: ['release clear'],
      left: 1,
    },
    {
      name: 'a command while a turn runs: it and what follows wait',
      state: held(clear, message('a')),
      view: { writable: true, idle: false },
      out: [],
      left: 2,
    },
    {
      name: 'messages while the usage limit is waited out: nothing, until the reset',
      state: held(message('a')),
      view: { writable: false, idle: false },
      out: [],
      left: 1,
    },
    {
      name: 'a process that does not read: nothing',
      state: held(message('a')),
      view: { writable: false, idle: true },
      out: [],
      left: 1,
    },
    {
      name: 'a write from before a crash is being settled: nothing',
      state: { held: [message('a')], settling: { uuid: 'u', queued: false } },
      view: ready,
      out: [],
      left: 1,
    },
  ])('$name', ({ state, view, out, left }) => {
    const step = holdStep(state, { kind: 'release', ...view });
    expect(names(step.actions)).toEqual(out);
    expect(step.state.held).toHaveLength(left);
  });

  it('each released item carries what stays held, so the shell takes it off the list before its write', () => {
    const step = holdStep(held(clear, message('a')), { kind: 'release', writable: true, idle: true });
    expect(step.actions).toEqual([
      { kind: 'release', frame: clear, rest: [message('a')] },
      { kind: 'release', frame: message('a'), rest: [] },
    ]);
  });

  it('messages the last process never took go ahead of what is held; a drop reports everything', () => {
    let state = holdStep(held(clear), { kind: 'kept_first', messages: [message('x'), message('y')] }).state;
    expect(state.held.map((f) => f.type)).toEqual(['user_message', 'user_message', 'clear']);
    const drop = holdStep(state, { kind: 'drop' });
    expect(drop.actions).toEqual([{ kind: 'dropped', frames: state.held }]);
    state = drop.state;
    expect(state.held).toEqual([]);
    expect(holdStep(state, { kind: 'drop' }).actions).toEqual([]);
  });

  it('a drop reports the messages as unread and each command as failed, with the reason', () => {
    expect(droppedFrames([message('a'), clear, message('b')], 'the process exited')).toEqual([
      { type: 'messages_unread', inboundIds: ['a', 'b'], reason: 'the process exited' },
      {
        type: 'command_result',
        commandId: 'c1',
        ok: false,
        message: '/clear did not run: the process exited',
      },
    ]);
    expect(droppedFrames([], 'x')).toEqual([]);
  });
});

describe('hold rules: settling a write a crash interrupted, on the clock', () => {
  /** Feeds events stamped with the clock's time; returns each step's action names and wake-up. */
  function settleDriver(begun: { uuid: string | undefined; read: boolean }) {
    const clock = new ManualClock(50_000);
    let state = holdStep(held(message('later')), { kind: 'settle_begun', ...begun }).state;
    const feed = (event: HoldEvent) => {
      const step = holdStep(state, event);
      state = step.state;
      return {
        actions: step.actions.map((a) =>
          a.kind === 'settled' ? `settled ${a.rewrite ? 'rewrite' : 'keep'} (${a.why})` : a.kind,
        ),
        wakeInMs: step.wakeAt === undefined ? undefined : step.wakeAt - clock.now(),
      };
    };
    return {
      clock,
      get state() {
        return state;
      },
      settle: (alive = true) => feed({ kind: 'settle', at: clock.now(), alive }),
      tick: (answered: boolean, alive = true) => feed({ kind: 'tick', at: clock.now(), alive, answered }),
      queued: (uuid: string) => feed({ kind: 'queued', uuid }),
      release: () => feed({ kind: 'release', writable: true, idle: true }),
    };
  }

  it('stdout showed it read before the settle: kept as it is, no fence; then held items go', () => {
    const d = settleDriver({ uuid: 'u1', read: false });
    expect(d.queued('u1')).toEqual({ actions: [], wakeInMs: undefined });
    expect(d.release().actions).toEqual([]);
    expect(d.settle()).toEqual({ actions: ['settled keep (read)'], wakeInMs: undefined });
    expect(d.release().actions).toEqual(['release']);
  });

  it('not read: a fence due within the timeout; answered first means the line never arrived, so it is written again', () => {
    const d = settleDriver({ uuid: 'u1', read: false });
    expect(d.settle()).toEqual({ actions: ['write_fence'], wakeInMs: FENCE_TIMEOUT_MS });
    d.clock.advance(20);
    expect(d.tick(false)).toEqual({ actions: [], wakeInMs: FENCE_TIMEOUT_MS - 20 });
    expect(d.release().actions).toEqual([]);
    d.clock.advance(20);
    expect(d.tick(true)).toEqual({ actions: ['settled rewrite (fence_answered)'], wakeInMs: undefined });
  });

  it('its queued arrives while the fence is out: noted while stdout is read, then read at the next look — even if the fence is answered in the same read', () => {
    const d = settleDriver({ uuid: 'u1', read: false });
    d.settle();
    expect(d.queued('other').actions).toEqual([]);
    expect(d.queued('u1')).toEqual({ actions: [], wakeInMs: FENCE_TIMEOUT_MS });
    expect(d.tick(true)).toEqual({ actions: ['settled keep (read)'], wakeInMs: undefined });
  });

  it('the fence unanswered: not before its deadline, then written again all the same', () => {
    const d = settleDriver({ uuid: 'u1', read: false });
    d.settle();
    d.clock.advance(FENCE_TIMEOUT_MS - 1);
    expect(d.tick(false)).toEqual({ actions: [], wakeInMs: 1 });
    d.clock.advance(1);
    expect(d.tick(false).actions).toEqual(['settled rewrite (fence_timeout)']);
  });

  it.each([
    {
      name: 'read before the bridge died',
      begun: { uuid: 'u1', read: true },
      alive: true,
      want: 'settled keep (read)',
    },
    {
      name: 'a control line (no uuid)',
      begun: { uuid: undefined, read: false },
      alive: true,
      want: 'settled keep (control_line)',
    },
    {
      name: 'no process to ask',
      begun: { uuid: 'u1', read: false },
      alive: false,
      want: 'settled keep (no_process)',
    },
  ])('settled at once: $name', ({ begun, alive, want }) => {
    const d = settleDriver(begun);
    expect(d.settle(alive)).toEqual({ actions: [want], wakeInMs: undefined });
  });

  it('the process goes away while the fence is out: nothing to write into', () => {
    const d = settleDriver({ uuid: 'u1', read: false });
    d.settle();
    d.clock.advance(100);
    expect(d.tick(false, false).actions).toEqual(['settled keep (no_process)']);
  });
});
