/**
 * The wait for a usage limit's reset, as a shell over the session machine's rule (`Session.limitReset`):
 * one timer per conversation, armed for the reset time the session state holds (so a restarted bridge
 * arms it again from the snapshot), and at that time the wait ends — the CLI is told to go on, or the
 * messages held meanwhile are written — in this order: the CLI's line, the frames, the snapshot, the held
 * messages. A crash between the line and the snapshot tells the CLI twice to go on, which answers the
 * same messages once; the other order could leave the turn waiting for ever.
 */
import type { Clock, TimerHandle } from '@switchyard/protocol';
import type { Session } from '../../core/session/session.js';
import type { Delivery } from '../delivery/delivery.js';
import type { FrameSink } from '../outbox/frame-sink.js';
import type { Supervisor } from '../process/supervisor.js';

/** What the wait reaches of its conversation. */
export interface LimitWaitHost {
  session: Session;
  delivery: Pick<Delivery, 'holding' | 'releaseHeld'>;
  supervisor: Pick<Supervisor, 'writeAll'>;
  emit: FrameSink['emit'];
  persist(force: boolean): void;
  clock: Clock;
}

/** The conversation's limit timer. */
export interface LimitWait {
  /** Arms (or re-arms) the timer for the session's reset time, if it waits for one; call after each pump. */
  arm(): void;
  /** Disarms the timer (the conversation stops). */
  stop(): void;
}

/** Creates the wait; nothing is armed until {@link LimitWait.arm}. */
export function createLimitWait(host: LimitWaitHost): LimitWait {
  const { session, clock } = host;
  let timer: TimerHandle | undefined;
  let armedFor: number | undefined;
  let stopped = false;

  const fire = (): void => {
    timer = undefined;
    armedFor = undefined;
    if (stopped) return;
    const step = session.limitReset(clock.now(), host.delivery.holding);
    if (step) {
      host.supervisor.writeAll(step.writes);
      host.emit(step.frames);
      host.persist(true);
      host.delivery.releaseHeld();
    }
    wait.arm();
  };

  const wait: LimitWait = {
    arm() {
      const until = session.limitedUntil;
      if (stopped || until === armedFor) return;
      clock.clearTimeout(timer);
      armedFor = until;
      timer = until === undefined ? undefined : clock.setTimeout(fire, Math.max(0, until - clock.now()));
    },
    stop() {
      stopped = true;
      clock.clearTimeout(timer);
      timer = undefined;
    },
  };
  return wait;
}
