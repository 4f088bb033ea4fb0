/**
 * The session machine's state: everything `Session` (and its pure helpers in `prompts.ts` and
 * `subagents.ts`) knows about the conversation with one Claude process. Plain JSON, so the bridge writes
 * it into `bridge.json` as it is and a restarted bridge restores it; a field added later must be optional
 * (or defaulted where it is read), since snapshots written before it existed have none.
 */
import type { AppFrame, FrameOf, Route } from '@switchyard/protocol/common';

/** A prompt the CLI has open, as much of it as the answer needs. */
export interface OpenPrompt {
  kind: 'permission' | 'question';
  toolName: string;
  input: Record<string, unknown>;
  suggestions: unknown[];
}

/** A sub-agent the machine knows of, keyed by its launching tool-use id. */
export interface AgentRecord {
  turnId: string;
  route: Route;
  background: boolean;
  finished: boolean;
}

/** The turn running now. */
export interface Turn {
  id: string;
  route: Route;
  /** Set for `/compact`, `/clear`, `/rename`: a CLI turn that answers a command, not a chat turn. */
  commandId?: string;
  interruptRequested: boolean;
  /**
   * Messages that waited for the previous turn's end and were announced for this one, which the CLI has
   * not echoed yet. It may read them over several turns (one that came during this turn's only call waits
   * for the next): those still here when this turn ends, after it read at least one, open the next turn.
   */
  unread?: string[];
  /** The CLI echoed a message in this turn: its queue was read, so what it did not read is still queued. */
  read?: boolean;
}

/** A control request this side sent and the command it answers. */
export interface PendingControl {
  commandId?: string;
  kind: 'interrupt' | 'set_model' | 'set_mode' | 'initialize';
  value?: string;
}

/** Everything the machine knows; plain JSON so it can be snapshotted to disk and restored. */
export interface SessionState {
  /** Bumped for every process started; part of turn ids so they never repeat across processes. */
  generation: number;
  turnCounter: number;
  controlCounter: number;
  sessionId?: string;
  /** An `init` was seen from the current process (the first one opens no turn). */
  initSeen: boolean;
  model?: string;
  mode?: string;
  compacting: boolean;
  exited: boolean;
  /** The turn running now; set exactly while a turn runs (nothing else says whether one does). */
  turn?: Turn;
  lastRoute?: Route;
  /** The route a turn the CLI starts by itself should take (set when a background task reports back). */
  selfRoute?: Route;
  /** Messages written into a running turn, not yet announced, oldest first. */
  awaiting: string[];
  /** The first request text of an awaiting message, for the `turn_started` it may open (bounded). */
  awaitingRequest?: string;
  /**
   * The messages written to this process that no model call has taken yet (no echo),
   * oldest first — a turn's opening message until its first call, a steer until the call that reads it.
   * If the process dies first they are written again to the next one (see `processExited`).
   */
  untaken?: FrameOf<'user_message'>[];
  prompts: Record<string, OpenPrompt>;
  /**
   * Request ids of prompts closed here (answered or cancelled), newest last, bounded. An `initialize`
   * answer lists the prompts the CLI had open *when it read the request*; a prompt answered after this
   * side wrote `initialize` but before the CLI's answer came back is in that list and must not be
   * offered again. Optional: snapshots from before it existed have none.
   */
  closedPrompts?: string[];
  controls: Record<string, PendingControl>;
  agents: Record<string, AgentRecord>;
  /**
   * Sub-agent tool calls still running → the launching Task/Agent tool-use id. A sub-agent's permission
   * prompt names only its own tool call; this finds its turn, so a prompt from a background sub-agent
   * after its parent's `result` is not mistaken for a new main-agent turn.
   */
  subagentTools?: Record<string, string>;
  /** Last reported agent state, so a status frame goes out only on a change. */
  reported?: string;
  /** The model call the main agent has open and its last text block, for block ids. */
  messageId?: string;
  textIndex?: number;
  /** The CLI's cumulative cost in the current process, as its last `result` said (USD). */
  processCostUsd?: number;
  /** What the conversation has cost in all its processes so far (USD). */
  costUsd?: number;
  /**
   * When `/handoff` gave the session to the terminal, or `/resume` took one a terminal may still hold;
   * cleared once this bridge's process has it again.
   */
  handedOffAt?: number;
  /**
   * The login's usage limit refused the running turn: it stays open, messages are held, and at
   * `resetsAt` (epoch ms) the conversation goes on (`Session.limitReset`). Absent while not limited.
   */
  limit?: { resetsAt: number; limitType?: string };
  /**
   * Every Claude session this conversation has had (its own, and those `/resume` continued here), oldest
   * first, at most {@link SESSIONS_KEPT}: `/resume` elsewhere never lists them. Optional: snapshots from
   * before it existed have only `sessionId`.
   */
  sessions?: string[];
}

/** How many of a conversation's sessions it remembers as its own. */
export const SESSIONS_KEPT = 200;

/** Records `sessionId` as one of the conversation's own sessions (see {@link SessionState.sessions}). */
export function recordSession(s: SessionState, sessionId: string): void {
  if (s.sessions === undefined) s.sessions = [];
  const sessions = s.sessions;
  if (sessions.includes(sessionId)) return;
  sessions.push(sessionId);
  if (sessions.length > SESSIONS_KEPT) sessions.splice(0, sessions.length - SESSIONS_KEPT);
}

/** The sessions the conversation holds as its own: those recorded, and the current one. */
export function ownSessions(s: Pick<SessionState, 'sessions' | 'sessionId'>): string[] {
  return s.sessionId !== undefined && !(s.sessions ?? []).includes(s.sessionId)
    ? [...(s.sessions ?? []), s.sessionId]
    : [...(s.sessions ?? [])];
}

/** What one step produced: frames for the gateway (in order) and lines for the CLI's stdin. */
export interface Step {
  frames: AppFrame[];
  writes: string[];
  /** Messages to write again to the next process (see `SessionState.untaken`). */
  redeliver?: FrameOf<'user_message'>[];
}

/** A fresh state for a bridge that has never run. */
export function initialSessionState(): SessionState {
  return {
    generation: 0,
    turnCounter: 0,
    controlCounter: 0,
    initSeen: false,
    compacting: false,
    exited: true,
    awaiting: [],
    prompts: {},
    controls: {},
    agents: {},
  };
}
