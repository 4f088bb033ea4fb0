/**
 * What the `Supervisor` (`supervisor.ts`) is built from and talks through: its options (the process-related part of the
 * bridge's options), the process's part of the conversation's snapshot, and what it needs of the
 * conversation around it.
 */
import type { AppFrame, Clock, FrameOf, Logger } from '@switchyard/protocol';
import type { Session } from '../../core/session/session.js';
import type { ChildRecord } from './child.js';

/** Options of the `Supervisor`: the process-related part of the bridge's options. */
export interface SupervisorOptions {
  stateDir: string;
  workDir: string;
  claudeBin: string;
  claudeArgs?: readonly string[] | undefined;
  env: NodeJS.ProcessEnv;
  model?: string | undefined;
  permissionMode?: string | undefined;
  /** `--setting-sources` (see `ConversationSettings.settingSources`). */
  settingSources?: string | undefined;
  mcpConfig?: string | undefined;
  restartOnExit: boolean;
  stuckAfterMs: number;
  crashLoop: { maxExits: number; windowMs: number };
  log: Logger;
  /** Time for the restart backoff, the crash-loop window and the stuck watchdog. */
  clock: Clock;
  /** Run before each start (the conversation's worktree is made there); a throw is a failed start. */
  prepare?: (() => void) | undefined;
}

/**
 * The process's part of the conversation's snapshot. The conversation owns the snapshot and is its only
 * writer: the supervisor reads these and asks for each change.
 */
export interface ProcessRecordPort {
  /** The recorded process, if any. */
  readonly child: ChildRecord | undefined;
  /** Exits within the crash-loop window, oldest first (ms). */
  readonly exits: readonly number[];
  /** Restarts are off until a person asks again. */
  readonly crashLoop: boolean;
  /** A new process: recorded, its stdout read from offset 0. The caller persists (forced) right after. */
  started(record: ChildRecord): void;
  /** The process is gone: its record forgotten, `exits` kept, a crash loop flagged when `crashLoop`. */
  exited(exits: readonly number[], crashLoop: boolean): void;
  /** A person asked again after a crash loop: exits forgotten, restarts on. */
  retry(): void;
  /** The process was stopped for good (a shutdown): its record forgotten. */
  forget(): void;
}

/** What the supervisor needs of the bridge around it. */
export interface SupervisorHost {
  /** Where the process record, exits and the crash-loop flag are kept (see {@link ProcessRecordPort}). */
  readonly record: ProcessRecordPort;
  readonly session: Session;
  emit(frames: AppFrame[]): void;
  persist(force: boolean): void;
  /** A new process started: read its stdout from offset 0; nothing from here on is a replay. */
  onStarted(): void;
  /**
   * The process is gone (its own frames already sent): report what was waiting for it — or, when
   * `restarting`, keep it for the process that is about to start. Called after the exit's frames.
   * `redeliver`: messages no model call took, for the next process (only when `restarting`), to be
   * written before anything held.
   */
  onExited(restarting: boolean, redeliver: FrameOf<'user_message'>[]): void;
  /** Whether the CLI recorded this message in the conversation's transcript (its resume will have it). */
  inTranscript(inboundId: string): boolean;
  /** Whether a process may be started now (false while the agent's process slots are all taken). */
  mayStart(): boolean;
}
