/**
 * Which operator events are a running turn's passing trouble: an API error the CLI retries on its own
 * (`system/api_retry`: overloaded, rate limited, a 5xx). The chat is told at once ("⚠️ API 529 …; retry
 * 1 of 10"), in one message a turn, and that message is void once the turn succeeds: the retry worked,
 * so it leaves the chat and `/status` then. A turn that fails keeps it beside its failure.
 */
import type { FrameOf } from '@switchyard/protocol/common';

/** The operator event kinds the CLI reports while it retries a model call. */
const RETRIED_KINDS: ReadonlySet<FrameOf<'operator_event'>['kind']> = new Set([
  'overloaded',
  'rate_limit',
  'api_error',
]);

/** An operator event that belongs to one running turn of one conversation and may pass. */
export type TurnNoticeEvent = FrameOf<'operator_event'> & {
  readonly turnId: string;
  readonly route: NonNullable<FrameOf<'operator_event'>['route']>;
};

/** True for an API error of a running turn (see the module comment); false for everything else. */
export function isTurnNotice(event: FrameOf<'operator_event'>): event is TurnNoticeEvent {
  return event.turnId !== undefined && event.route !== undefined && RETRIED_KINDS.has(event.kind);
}

/** What the turn's end does to its notice: a success takes it away; any other end leaves it standing. */
export function noticeAfterEnd(outcome: FrameOf<'turn_ended'>['outcome']): 'remove' | 'keep' {
  return outcome === 'success' ? 'remove' : 'keep';
}
