/**
 * The bridge's side of sharing sessions with a terminal: `/resume` (list the working directory's Claude
 * sessions; continue one), `/handoff` (stop the process so the terminal may take the session) and the
 * removal of a conversation's worktree. Each runs inside the pool's `exclusive` (`bridge.ts`); stopping
 * a process goes through the pool (`stopSession`, then `tryOpen`, which waits until it is gone), and the
 * conversation's own state changes through its gate (`io/terminal/gate.ts`).
 *
 * Invariants:
 * - Never two CLIs on one session: a session another process may be writing (`core/terminal/session-claim.ts`,
 *   probed by `process-scan.ts`) is refused, and so is one another conversation of this agent has live.
 * - `/resume` names only sessions of the conversation's own working directory (its transcripts) that are
 *   its own or no conversation's (a terminal's), never another conversation's, and a press naming any
 *   other session is refused.
 * - A handoff waiting for its turn to end is kept in `handoffs.json` (`frame-files.ts`) before the
 *   gateway's frame is acknowledged, until it is done: a restarted bridge finishes it once that turn
 *   has ended, and its chat gets the resume command as if nothing had happened.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  type AppFrame,
  type Clock,
  describeError,
  type Endpoint,
  type FrameOf,
  type Logger,
  type Receipt,
  type Route,
  type SessionInfo,
  type TimerHandle,
} from '@switchyard/protocol';
import { dirtyText } from '../../core/process/worktree.js';
import type { FrameHandlers } from '../../core/session/frame-handlers.js';
import { ownSessions } from '../../core/session/state.js';
import { type ClaimRules, claimOf, claimText } from '../../core/terminal/session-claim.js';
import { RESUME_PAGE_SIZE } from '../../core/terminal/session-list.js';
import { type BridgeOptions, CONVERSATIONS_DIR, conversationDir, settingsOf } from '../../options.js';
import { HANDOFFS_FILE, loadFrames, saveFrames } from '../pool/frame-files.js';
import type { Pool } from '../pool/pool.js';
import { removeWorktree, worktreeChanges, worktreeExists } from '../process/worktree.js';
import type { Conversation } from '../session/conversation.js';
import { readSnapshot, SNAPSHOT_FILE } from '../session/snapshot.js';
import { claudeConfigDir } from '../transcript/files.js';
import { claudeProcesses, transcriptStat } from './process-scan.js';
import { isSessionId, listTerminalSessions } from './sessions.js';

/** A transcript written this recently may still be growing: `/resume` refuses it. */
const GROWING_MS = 3000;
/** How often a handoff waiting for its turn looks again. */
const HANDOFF_POLL_MS = 300;

/** The frames handled here. */
export type TerminalCommandFrame =
  | FrameOf<'resume_list_request'>
  | FrameOf<'resume_session'>
  | FrameOf<'handoff'>
  | FrameOf<'worktree_remove'>;

/** What the terminal commands are built from. */
export interface TerminalCommandsConfig {
  options: BridgeOptions;
  pool: Pool;
  endpoint: Pick<Endpoint, 'send'>;
  keyOf(route: Route): string;
  /** The agent has one session for every chat (`conversations: shared`): no per-topic worktree. */
  shared: boolean;
  log: Logger;
  clock: Clock;
}

/** The handle; see the module comment. */
export interface TerminalCommands {
  /** The bridge's handlers of the terminal's frames (its routing table takes them in). */
  readonly handlers: FrameHandlers<TerminalCommandFrame['type']>;
  /** `info` with its conversation's worktree, when it has one on disk. */
  withWorktree(info: SessionInfo): SessionInfo;
  /** A `status` answer with its conversation's worktree (for a conversation with no process now). */
  withWorktreeStatus(status: FrameOf<'status'>): FrameOf<'status'>;
  stop(): void;
}

/** Builds the terminal commands of a started bridge. */
export function createTerminalCommands(config: TerminalCommandsConfig): TerminalCommands {
  const { options, pool, endpoint, keyOf, log, clock } = config;
  const configDir = claudeConfigDir(options.env ?? process.env);
  const conversationsDir = join(options.stateDir, CONVERSATIONS_DIR);
  const settings = (route: Route) => settingsOf(options, config.shared ? undefined : route);
  const send = (frame: AppFrame): void => void endpoint.send(frame).catch(() => {});
  const fail = (commandId: string, message: string): void =>
    send({ type: 'command_result', commandId, ok: false, message });
  /** Handoffs waiting for their conversation's turn to end, by conversation; on disk as well. */
  const handoffsFile = join(options.stateDir, HANDOFFS_FILE);
  const pending = new Map<string, FrameOf<'handoff'>>();
  const keep = (key: string, frame: FrameOf<'handoff'> | undefined): void => {
    if (frame) pending.set(key, frame);
    else if (!pending.delete(key)) return;
    saveFrames(handoffsFile, [...pending.values()]);
  };
  let timer: TimerHandle | undefined;
  let stopped = false;

  /**
   * Whether conversation `key` may see and continue `sessionId`: one it recorded as its own, or one no
   * conversation of this agent recorded (a terminal's). Every chat shares the working directory's
   * transcripts, so without this a group's `/resume` listed each private chat's sessions.
   */
  const mayContinue = (key: string): ((sessionId: string) => boolean) => {
    const owners = new Map<string, Set<string>>();
    const own = (sessionId: string, dir: string): void => {
      const set = owners.get(sessionId) ?? new Set<string>();
      set.add(dir);
      owners.set(sessionId, set);
    };
    const open = new Map([...pool.conversations.values()].map((c) => [conversationDir(c.key), c]));
    let dirs: string[] = [];
    try {
      dirs = readdirSync(conversationsDir);
    } catch {
      // No conversation has state yet.
    }
    for (const dir of new Set([...dirs, ...open.keys()])) {
      const conversation = open.get(dir);
      let sessions: string[] = [];
      try {
        sessions =
          conversation?.ownSessions() ??
          ownSessions(readSnapshot(join(conversationsDir, dir, SNAPSHOT_FILE))?.session ?? {});
      } catch {
        // An unreadable snapshot names no session.
      }
      for (const sessionId of sessions) own(sessionId, dir);
    }
    const mine = conversationDir(key);
    return (sessionId) => {
      const by = owners.get(sessionId);
      return by === undefined || by.has(mine);
    };
  };

  /** The session the conversation has, whether or not its object is open. */
  const sessionOf = (key: string): string | undefined =>
    pool.conversations.get(key)?.info().sessionId ??
    readSnapshot(join(conversationsDir, conversationDir(key), SNAPSHOT_FILE))?.session.sessionId;

  /**
   * Why `sessionId` of `workDir` may not be opened in conversation `key` now, or undefined: another
   * process may be writing it, or another conversation of this agent has it live.
   */
  const busyReason = (
    key: string,
    workDir: string,
    sessionId: string,
    processes = claudeProcesses(conversationsDir),
  ) => {
    const own = pool.conversations.get(key);
    const ownPid = own?.live ? own.info().pid : undefined;
    const rules: ClaimRules = {
      cwdRule: 'before_write',
      growingMs: GROWING_MS,
      ...(ownPid !== undefined ? { ignore: [ownPid] } : {}),
    };
    const other = [...pool.conversations.values()].find(
      (c) => c.key !== key && c.live && c.info().sessionId === sessionId,
    );
    if (other) return 'another conversation of this agent has it open';
    const claim = claimOf(
      sessionId,
      workDir,
      transcriptStat(configDir, workDir, sessionId),
      processes,
      rules,
      clock.now(),
    );
    return claim.kind === 'free' ? undefined : claimText(claim);
  };

  /** Stops the conversation's process, if any, and returns its object reopened without one. */
  const withoutProcess = async (key: string, route: Route): Promise<Conversation | string> => {
    const current = pool.conversations.get(key);
    if (current) {
      const stopped = pool.stopSession(key);
      if (!stopped.ok) return stopped.message;
    }
    const opened = await pool.tryOpen(key, route);
    return opened ?? pool.failureReason(key) ?? 'this conversation could not be opened';
  };

  const list = (frame: FrameOf<'resume_list_request'>): void => {
    const key = keyOf(frame.route);
    const workDir = settings(frame.route).workDir;
    const processes = claudeProcesses(conversationsDir);
    try {
      const page = listTerminalSessions(
        configDir,
        workDir,
        frame.page ?? 0,
        (sessionId) => busyReason(key, workDir, sessionId, processes),
        sessionOf(key),
        mayContinue(key),
      );
      send({ type: 'resume_list', commandId: frame.commandId, route: frame.route, workDir, ...page });
    } catch (err) {
      const error = `could not read the sessions of ${workDir}: ${describeError(err)}`.slice(0, 2000);
      send({
        type: 'resume_list',
        commandId: frame.commandId,
        route: frame.route,
        workDir,
        page: 0,
        pageSize: RESUME_PAGE_SIZE,
        total: 0,
        sessions: [],
        error,
      });
    }
  };

  const resume = async (frame: FrameOf<'resume_session'>, receipt?: Receipt): Promise<void> => {
    const key = keyOf(frame.route);
    const workDir = settings(frame.route).workDir;
    if (!isSessionId(frame.sessionId) || !transcriptStat(configDir, workDir, frame.sessionId))
      return fail(
        frame.commandId,
        `There is no session ${frame.sessionId} in ${workDir}: send /resume again.`,
      );
    if (!mayContinue(key)(frame.sessionId))
      return fail(
        frame.commandId,
        `Session ${frame.sessionId} belongs to another conversation of this agent: continue it there.`,
      );
    const current = pool.conversations.get(key);
    if (current?.live && !current.evictable)
      return fail(
        frame.commandId,
        'A turn or a prompt is open here: wait for it to end (or /stop it), then press again.',
      );
    const busy = busyReason(key, workDir, frame.sessionId);
    if (busy !== undefined)
      return fail(
        frame.commandId,
        `Session ${frame.sessionId} was not opened: ${busy}. Close it there, then press again.`,
      );
    const opened = await withoutProcess(key, frame.route);
    if (typeof opened === 'string') return fail(frame.commandId, opened);
    await opened.handle(frame, receipt);
  };

  /** Stops the process (if it may be stopped now) and answers the handoff; false while its turn runs. */
  const finishHandoff = async (frame: FrameOf<'handoff'>, receipt?: Receipt): Promise<boolean> => {
    const key = keyOf(frame.route);
    const current = pool.conversations.get(key);
    if (current?.live && !current.evictable) return false;
    log.info({ conversation: key, live: current?.live ?? false }, 'handing the session to the terminal');
    keep(key, undefined);
    const opened = await withoutProcess(key, frame.route);
    if (typeof opened === 'string') {
      send({
        type: 'handoff_result',
        commandId: frame.commandId,
        route: frame.route,
        outcome: 'failed',
        message: opened,
      });
      return true;
    }
    await opened.handle(frame, receipt);
    return true;
  };

  const poll = (): void => {
    clock.clearTimeout(timer);
    timer = undefined;
    if (stopped || pending.size === 0) return;
    timer = clock.setTimeout(() => {
      timer = undefined;
      pool
        .exclusive(async () => {
          for (const frame of [...pending.values()]) await finishHandoff(frame);
        })
        .catch((err: unknown) => log.error({ err: describeError(err) }, 'a handoff failed'))
        .finally(poll);
    }, HANDOFF_POLL_MS);
  };

  const handoff = async (frame: FrameOf<'handoff'>, receipt?: Receipt): Promise<void> => {
    if (await finishHandoff(frame, receipt)) return;
    const key = keyOf(frame.route);
    const waitingAlready = pending.has(key);
    keep(key, frame);
    if (frame.now) {
      // Ends the running turn now; the process stops once the interrupt has settled it.
      await pool.conversations
        .get(key)
        ?.handle({ type: 'interrupt', commandId: `${frame.commandId}.stop`, route: frame.route });
    } else if (!waitingAlready) {
      send({ type: 'handoff_result', commandId: frame.commandId, route: frame.route, outcome: 'after_turn' });
    }
    poll();
  };

  const removeTree = async (frame: FrameOf<'worktree_remove'>, receipt?: Receipt): Promise<void> => {
    const spec = settings(frame.route).worktree;
    if (!spec)
      return fail(
        frame.commandId,
        'This conversation has no worktree of its own (worktree: true is not set for it).',
      );
    const key = keyOf(frame.route);
    const current = pool.conversations.get(key);
    if (current?.live && !current.evictable)
      return fail(
        frame.commandId,
        'A turn or a prompt is open here: wait for it to end (or /stop it), then press again.',
      );
    let dirty: string[];
    try {
      dirty = worktreeChanges(spec);
    } catch (err) {
      return fail(frame.commandId, describeError(err));
    }
    if (dirty.length > 0) return fail(frame.commandId, dirtyText(spec, dirty));
    const opened = await withoutProcess(key, frame.route);
    if (typeof opened === 'string') return fail(frame.commandId, opened);
    const removed = removeWorktree(spec);
    if (!removed.ok)
      return fail(
        frame.commandId,
        'dirty' in removed
          ? dirtyText(spec, removed.dirty)
          : `The worktree was not removed: ${removed.error}`,
      );
    await opened.handle(frame, receipt);
    send({
      type: 'command_result',
      commandId: frame.commandId,
      ok: true,
      message: `Reset this conversation and removed its worktree ${spec.path} (branch ${spec.branch} is kept). The next message starts a new session in a fresh worktree.`,
    });
  };

  // Handoffs a killed bridge left waiting: finished once their turns have ended, as before the kill.
  for (const frame of loadFrames<FrameOf<'handoff'>>(handoffsFile)) pending.set(keyOf(frame.route), frame);
  if (pending.size > 0) {
    log.info({ handoffs: pending.size }, 'handoffs left waiting by the last bridge: finishing them');
    poll();
  }

  /** Logs a terminal command as it arrives, then runs it. */
  const logged =
    <F extends TerminalCommandFrame>(run: (frame: F, receipt?: Receipt) => void | Promise<void>) =>
    async (frame: F, receipt?: Receipt): Promise<void> => {
      log.info({ type: frame.type, conversation: keyOf(frame.route) }, 'terminal command');
      await run(frame, receipt);
    };

  return {
    handlers: {
      resume_list_request: logged((frame) => list(frame)),
      resume_session: logged((frame, receipt) => resume(frame, receipt)),
      handoff: logged((frame, receipt) => handoff(frame, receipt)),
      worktree_remove: logged((frame, receipt) => removeTree(frame, receipt)),
    },
    withWorktree(info) {
      const spec = settings(info.route).worktree;
      return spec && worktreeExists(spec) ? { ...info, worktree: spec.path } : info;
    },
    withWorktreeStatus(status) {
      const spec = status.route ? settings(status.route).worktree : undefined;
      return spec ? { ...status, worktree: { path: spec.path, branch: spec.branch } } : status;
    },
    stop() {
      stopped = true;
      clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}
