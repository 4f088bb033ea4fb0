/**
 * One conversation's side of sharing its Claude session with a terminal: the state changes of `/resume`
 * (continue another session of the working directory), `/handoff` (the session is the terminal's until
 * the next message) and a worktree's removal (a new session), and the gate every user message passes
 * before it may start a process.
 *
 * The gate: a message that would start `claude --resume <id>` while another process may be writing that
 * session (`core/terminal/session-claim.ts`: one whose command line names it; after a handoff or a
 * `/resume` also one in the working directory, or a transcript still growing) is held (durably,
 * `delivery.hold`), the chat is told
 * once (`operator_event` `terminal_session`), and the session is asked again with backoff on the bridge's
 * clock; once it is free the process starts and the held messages go in, in order. Messages arriving
 * meanwhile queue behind. Nothing starts once the conversation has stopped (`supervisor.stopped`). A
 * bridge restarted during the wait keeps the held messages; they go in with the conversation's next one.
 */
import type { AppFrame, Clock, FrameOf, Logger, TimerHandle } from '@switchyard/protocol';
import { describeError } from '@switchyard/protocol';
import type { WorktreeSpec } from '../../core/process/worktree.js';
import type { Session } from '../../core/session/session.js';
import { recordSession } from '../../core/session/state.js';
import { type ClaimRules, claimRetryMs, claimText } from '../../core/terminal/session-claim.js';
import type { Delivery } from '../delivery/delivery.js';
import type { Supervisor } from '../process/supervisor.js';
import type { HistoryTail } from '../transcript/history-tail.js';
import { probeClaim } from './process-scan.js';

/** After a handoff, a transcript written this recently may still be growing (another host's CLI). */
const HANDED_OFF_GROWING_MS = 3000;

/** The frames the conversation's side handles (`commands.ts` hands them here). */
export type TerminalFrame = FrameOf<'resume_session'> | FrameOf<'handoff'> | FrameOf<'worktree_remove'>;

/** What the gate needs of the conversation. */
export interface TerminalGateHost {
  readonly session: Session;
  readonly supervisor: Pick<Supervisor, 'child' | 'unknown' | 'ensure' | 'stopped'>;
  readonly delivery: Pick<Delivery, 'hold' | 'releaseHeld' | 'dropHeld'>;
  readonly history: Pick<HistoryTail, 'entries' | 'follow'>;
  emit(frames: AppFrame[]): void;
  persist(force: boolean): void;
  /** Whether a process may start now (a free slot). */
  mayStart(): boolean;
  /** The bridge's conversations directory (its own processes' fifos are there), Claude's config directory. */
  conversationsDir: string;
  /** This conversation's stdin fifo: a process reading it that it does not hold is an orphan (stopped). */
  fifo: string;
  configDir: string;
  /** The agent sets `CLAUDE_CONFIG_DIR`: a handoff names it, since the terminal must use it too. */
  configDirSet: boolean;
  workDir: string;
  worktree?: WorktreeSpec | undefined;
  log: Logger;
  clock: Clock;
}

/** The conversation's side; see the module comment. */
export interface TerminalGate {
  /** Whether `frame` was held to wait for the session (true: nothing more to do with it now). */
  admit(key: string, frame: FrameOf<'user_message'>): boolean;
  /** Applies a `/resume`, `/handoff` or worktree removal the bridge has prepared (its process stopped). */
  apply(frame: TerminalFrame): void;
  /** The worktree, for `/status`. */
  readonly worktree: WorktreeSpec | undefined;
}

/** Builds the gate of one conversation. */
export function createTerminalGate(host: TerminalGateHost): TerminalGate {
  const { session, supervisor, delivery, log, clock } = host;
  let waiting = false;
  let attempt = 0;
  let timer: TimerHandle | undefined;
  const rules = (): ClaimRules =>
    session.state.handedOffAt !== undefined
      ? {
          cwdRule: 'any',
          growingMs: HANDED_OFF_GROWING_MS,
          writtenAfter: session.state.handedOffAt,
          fifo: host.fifo,
        }
      : { cwdRule: 'off', growingMs: 0, fifo: host.fifo };
  /** Stops an orphan (see `session-claim.ts`): its group, at once — it was given nothing to lose. */
  const stopOrphan = (pid: number): void => {
    log.warn(
      { pid },
      'stopping a Claude process a bridge started and never recorded (it was killed in between)',
    );
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
        return;
      } catch {
        // not a group leader, or gone already
      }
    }
  };
  const claim = (sessionId: string) =>
    probeClaim(
      { conversationsDir: host.conversationsDir, configDir: host.configDir, workDir: host.workDir },
      sessionId,
      rules(),
      clock.now(),
    );
  /** The session is the bridge's again: the handoff's wider rules end. */
  const reclaim = (): void => {
    if (session.state.handedOffAt === undefined) return;
    delete session.state.handedOffAt;
    host.persist(true);
  };
  const arm = (): void => {
    clock.clearTimeout(timer);
    timer = clock.setTimeout(check, claimRetryMs(attempt++));
  };
  const check = (): void => {
    timer = undefined;
    if (supervisor.stopped) {
      waiting = false;
      return;
    }
    try {
      const sessionId = session.state.sessionId;
      const found = sessionId === undefined ? undefined : claim(sessionId);
      if (found?.kind === 'orphan') stopOrphan(found.pid);
      const taken = found !== undefined && found.kind !== 'free';
      if (taken || !host.mayStart()) {
        arm();
        return;
      }
      reclaim();
      waiting = false;
      if (supervisor.child || supervisor.ensure()) delivery.releaseHeld();
      else delivery.dropHeld('the Claude process could not be started');
      log.info({ sessionId }, 'the session is free again; its held messages go in');
    } catch (err) {
      waiting = false;
      log.error({ err: describeError(err) }, 'could not resume the session after waiting for it');
    }
  };
  return {
    worktree: host.worktree,
    admit(key, frame) {
      if (waiting) {
        delivery.hold(key, frame);
        return true;
      }
      const sessionId = session.state.sessionId;
      if (supervisor.child || supervisor.unknown || sessionId === undefined) return false;
      const found = claim(sessionId);
      if (found.kind === 'free') {
        reclaim();
        return false;
      }
      delivery.hold(key, frame);
      waiting = true;
      attempt = 0;
      arm();
      // An orphan is this side's own: stopped now, and the session asked again after the first backoff.
      if (found.kind === 'orphan') {
        stopOrphan(found.pid);
        return true;
      }
      log.info({ sessionId, claim: found }, 'another process may be writing the session; waiting');
      host.emit([
        {
          type: 'operator_event',
          kind: 'terminal_session',
          route: frame.route,
          message: `This conversation's Claude session is still open elsewhere: ${claimText(found)}. Your message waits, and goes in once that process has ended (close it at the terminal).`,
        },
      ]);
      return true;
    },
    apply(frame) {
      const s = session.state;
      switch (frame.type) {
        case 'resume_session':
          s.sessionId = frame.sessionId;
          recordSession(s, frame.sessionId);
          // The session came from the terminal, which may take it up again (`claude --continue` names no
          // session): watched as after a handoff until this bridge's process has it.
          s.handedOffAt = clock.now();
          // The old session's exchanges are not this one's; the tail reads the new one's recent end.
          host.history.entries.length = 0;
          host.history.follow(frame.sessionId);
          host.persist(true);
          host.emit([
            {
              type: 'command_result',
              commandId: frame.commandId,
              ok: true,
              message: `This conversation now continues session ${frame.sessionId}: your next message resumes it (claude --resume).`,
            },
          ]);
          return;
        case 'handoff':
          s.handedOffAt = clock.now();
          host.persist(true);
          host.emit([
            {
              type: 'handoff_result',
              commandId: frame.commandId,
              route: frame.route,
              outcome: s.sessionId !== undefined ? 'done' : 'failed',
              ...(s.sessionId !== undefined
                ? {
                    sessionId: s.sessionId,
                    workDir: host.workDir,
                    ...(host.configDirSet ? { configDir: host.configDir } : {}),
                  }
                : { message: 'This conversation has no Claude session yet: send it a message first.' }),
            },
          ]);
          return;
        case 'worktree_remove':
          delete s.sessionId;
          delete s.handedOffAt;
          host.history.entries.length = 0;
          host.persist(true);
          return;
      }
    },
  };
}
