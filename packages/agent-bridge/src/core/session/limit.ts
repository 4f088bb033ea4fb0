/**
 * The usage limit's rules on the session machine's state, pure (no clock: `now` is passed in), in the
 * shape of `core/prompts/prompts.ts`: functions `Session` and `events.ts` call. Measured on 2.1.328 (the
 * fixture `usage-limit-oauth`): a subscription login refused by its limit gets one `rate_limit_event`
 * rejected, then for its turn, and for every message written meanwhile (each run as a turn of its own),
 * "You've hit your limit · resets …" and a refused `result`; the refused user texts stay in the CLI's
 * conversation, so the first request after the reset carries them all.
 *
 * Rules:
 * - The refused turn does not end: it waits, open (`limited`), and one `usage_limit` frame says so with
 *   the reset time. Steers already written are announced as read by it; none opens a turn of its own.
 * - While it waits nothing is written to the CLI (`core/delivery/hold.ts` holds what arrives).
 * - At the reset the wait ends (`resumed`): what was held is written, or, with nothing held, one line
 *   tells the CLI to go on ({@link LIMIT_RESET_TEXT}); the waiting turn answers either way.
 * - `/stop` during the wait ends the turn as interrupted, with nothing written to the CLI (it is idle).
 */
import type { AgentState, AppFrame, FrameOf } from '@switchyard/protocol/common';
import type { SessionState, Step, Turn } from './state.js';

/** How long a usage limit is waited out when the CLI named no reset time: 30 minutes, then tried again. */
export const USAGE_LIMIT_GUESS_MS = 30 * 60_000;

/**
 * What the CLI is told when a usage limit it was refused by has reset and nobody wrote since: the
 * messages it was refused for are in its conversation already and are not written again.
 */
export const LIMIT_RESET_TEXT =
  '[switchyard] The usage limit has reset. Answer the messages above that have no answer yet.';

/** What the rules reach of the session machine (`SessionOps` is one). */
export interface LimitSession {
  readonly state: SessionState;
  agentState(): AgentState;
  /** A status frame when the reported state changes. */
  status(state: AgentState): AppFrame[];
  clearAwaiting(): void;
}

/** The `usage_limit` frame of the conversation's wait, for its turn (or its last route); none without a route. */
function limitFrame(
  s: SessionState,
  state: 'limited' | 'resumed',
  limit: NonNullable<SessionState['limit']>,
  turn: Turn | undefined = s.turn,
): FrameOf<'usage_limit'>[] {
  const route = turn?.route ?? s.lastRoute;
  if (!route) return [];
  return [
    {
      type: 'usage_limit',
      route,
      ...(turn ? { turnId: turn.id } : {}),
      state,
      resetsAt: limit.resetsAt,
      ...(limit.limitType !== undefined ? { limitType: limit.limitType } : {}),
    },
  ];
}

/**
 * The usage limit was reached: noted once (the `usage_limit` frame, `limited`) with its reset time, or
 * `USAGE_LIMIT_GUESS_MS` from now when the CLI named none. Reached again while noted, a later reset
 * time replaces the noted one and nothing is said again.
 */
export function enterLimit(
  session: LimitSession,
  step: Step,
  now: number,
  resetsAt?: number,
  limitType?: string,
): void {
  const s = session.state;
  const at = resetsAt ?? now + USAGE_LIMIT_GUESS_MS;
  if (s.limit) {
    if (at > s.limit.resetsAt) s.limit.resetsAt = at;
    return;
  }
  s.limit = { resetsAt: at, ...(limitType !== undefined ? { limitType } : {}) };
  step.frames.push(...limitFrame(s, 'limited', s.limit), ...session.status(session.agentState()));
}

/**
 * A turn the usage limit refused (its `result`) does not end: it waits, open, and what it is asked at
 * the reset answers it. Every steer already written is in the CLI's conversation, so it is announced as
 * read by this turn now (see the module comment).
 */
export function holdForReset(session: LimitSession, turn: Turn, step: Step, now: number): void {
  const s = session.state;
  if (!s.limit) enterLimit(session, step, now);
  if (s.awaiting.length > 0) {
    step.frames.push({ type: 'message_taken', turnId: turn.id, inboundIds: [...s.awaiting] });
    session.clearAwaiting();
  }
  delete s.untaken;
  s.compacting = false;
  step.frames.push(...session.status(session.agentState()));
}

/**
 * The reset time has come (`now` at or past it): the wait is over (`usage_limit` `resumed`). With
 * nothing `held` to write, the CLI is told to go on ({@link LIMIT_RESET_TEXT}). `undefined` when nothing
 * waits or it is too early.
 */
export function resetLimit(session: LimitSession, now: number, held: boolean): Step | undefined {
  const s = session.state;
  const limit = s.limit;
  if (!limit || now < limit.resetsAt) return undefined;
  delete s.limit;
  const frames: AppFrame[] = [...limitFrame(s, 'resumed', limit), ...session.status(session.agentState())];
  // A plain user line, no uuid: nothing waits for its receipt (a crash may write it twice, `io/session/limit-wait.ts`).
  const line = JSON.stringify({ type: 'user', message: { role: 'user', content: LIMIT_RESET_TEXT } });
  const writes = held || !s.turn ? [] : [line];
  return { frames, writes };
}

/**
 * `/stop` while the usage limit is waited out: the CLI is idle (its turn was refused), so nothing is
 * written to it; the waiting turn ends as interrupted and the wait with it. `undefined` when not waiting.
 */
export function stopLimitWait(session: LimitSession, commandId: string): Step | undefined {
  const s = session.state;
  const turn = s.turn;
  const limit = s.limit;
  if (!limit || !turn) return undefined;
  delete s.limit;
  delete s.turn;
  const frames: AppFrame[] = [
    ...limitFrame(s, 'resumed', limit, turn),
    { type: 'turn_ended', turnId: turn.id, outcome: 'interrupted' },
    { type: 'command_result', commandId, ok: true },
    ...session.status(session.agentState()),
  ];
  return { frames, writes: [] };
}
