/**
 * The transcript as the bridge runs it: a {@link TranscriptTail} on the current session's files, feeding
 * the bounded history `/status` shows (the user's side of it is not on stdout; see `history.ts`).
 *
 * Why the transcript at all: stdout is authoritative for everything live (turns, text, tools, prompts,
 * sub-agent lines with `parent_tool_use_id`, API retries and failures — 2.1.328 prints all of them).
 * Not taken from the transcript, because stdout already has it (checked on 2.1.328): API errors — each
 * retry is a `system/api_retry` line and a failed turn's `result` carries `api_error_status`; the
 * transcript's `system/api_error` lines say the same; a sub-agent's API retries appear in neither.
 * Sub-agent detail — its `assistant`/`user` lines come on stdout with `parent_tool_use_id`. So sub-agent
 * files are tailed (cursors, idle release) but their lines are passed over unparsed until something
 * needs them, and main-file lines are decoded only if they can make a history entry.
 *
 * Contract with the snapshot: the entries are the snapshot's own `history` array, and `checkpoint()`
 * gives the cursors to write with them. `onEntry` fires after each new entry, so the (throttled) snapshot
 * holds an entry and a cursor past its line together; a restarted bridge resumes without skipping or
 * repeating a line (see {@link TranscriptTail}'s checkpoint contract).
 */
import type { Clock, Logger } from '@switchyard/protocol';
import { addHistory, type HistoryEntry, historyEntryOf, mayBeHistory } from './history.js';
import { type TranscriptCursors, TranscriptTail } from './transcript.js';

/**
 * Transcript lines longer than this are skipped. Lower than stdout's cap because each attached file
 * holds a read buffer this size, and the lines history needs (enqueued messages, assistant text) are far
 * shorter; what is skipped is large tool output and images.
 */
const TRANSCRIPT_MAX_LINE_BYTES = 1024 * 1024;
/** The most of a session file read when the tail first meets it (a resumed conversation): its recent end. */
const TRANSCRIPT_BACKLOG_BYTES = 4 * 1024 * 1024;
/** A sub-agent file quiet this long has its watcher and descriptor released (reattached if it grows). */
const SUBAGENT_IDLE_MS = 2 * 60_000;

/** Options of {@link HistoryTail}. */
export interface HistoryTailOptions {
  /** `CLAUDE_CONFIG_DIR` and the agent's work directory: where the session files are. */
  configDir: string;
  workDir: string;
  /** The session to follow first, if known. */
  sessionId?: string | undefined;
  /** Cursors from an earlier `checkpoint()`, and the history they produced (mutated in place). */
  cursors?: TranscriptCursors | undefined;
  history: HistoryEntry[];
  /** After each new history entry: time to (throttled) save the snapshot. */
  onEntry(): void;
  log: Logger;
  /** Time for the tail's rescans (the conversation's clock). */
  clock: Clock;
}

/** Follows the current session's transcript and keeps the `/status` history. */
export class HistoryTail {
  /** Recent exchanges, oldest first: the same array as given in the options. */
  readonly entries: HistoryEntry[];
  readonly #tail: TranscriptTail;

  constructor(options: HistoryTailOptions) {
    this.entries = options.history;
    const log = options.log;
    this.#tail = new TranscriptTail({
      configDir: options.configDir,
      cwd: options.workDir,
      clock: options.clock,
      ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
      ...(options.cursors ? { cursors: options.cursors } : {}),
      onLine: (line) => {
        if (line.source !== 'main') return;
        const entry = historyEntryOf(line.value, options.clock.now());
        if (!entry) return;
        addHistory(this.entries, entry);
        options.onEntry();
      },
      // Sub-agent lines: nothing here needs them yet (see the module comment), so none is parsed.
      acceptBytes: (line, source) => source === 'main' && mayBeHistory(line),
      onSkipped: (file, bytes) => log.warn({ file, bytes }, 'skipped an oversized transcript line'),
      maxLineBytes: TRANSCRIPT_MAX_LINE_BYTES,
      backlogBytes: TRANSCRIPT_BACKLOG_BYTES,
      idleReleaseMs: SUBAGENT_IDLE_MS,
    });
  }

  start(): void {
    this.#tail.start();
  }

  stop(): void {
    this.#tail.stop();
  }

  /** Points the tail at the session stdout names (a new id after `/clear`; unset in between: no change). */
  follow(sessionId: string | undefined): void {
    if (sessionId !== undefined && sessionId !== this.#tail.sessionId) this.#tail.follow(sessionId);
  }

  /** Reads what the CLI flushed since the last watch event (before answering `/status`). */
  rescan(): void {
    this.#tail.rescan();
  }

  /** The cursors to save with {@link entries}. */
  checkpoint(): TranscriptCursors {
    return this.#tail.checkpoint();
  }
}
