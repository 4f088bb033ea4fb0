/**
 * Files the agent sends, from the tool call until Telegram has them: the bridge side of
 * `send_file`/`send_photo`/`send_files` (DESIGN.md, "Where each thing is kept").
 *
 * Contract, per call (keyed by the idempotency key the MCP endpoint gives it, which becomes the frame's
 * `fileId`):
 * 1. The paths are checked (`file-check.ts`); a refusal is the tool's error and nothing is sent.
 * 2. Each file is copied into the exchange directory (where the gateway, maybe another user, can read
 *    it: protocol's `exchange.ts`), so an edit or delete by Claude after the call does not change what
 *    is sent. The entry (the `file_send` frame to send) is written to `<dir>/index.json` before the frame
 *    is emitted: after a crash at any point the entry, or nothing, is on disk (a copy without an entry
 *    is swept by the gateway's retention).
 * 3. The call waits for the gateway's `file_sent`, at most `waitMs`; past that it answers "queued" and
 *    the file still goes once the gateway is back.
 * 4. `file_sent` settles the entry: the copies are deleted, the outcome is kept (bounded) so a re-asked
 *    call gets the same answer instead of a second send.
 *
 * Exactly once across restarts rests on the gateway uploading once per `fileId`: a restarted bridge
 * emits `file_send` again for every entry not yet settled ({@link FileOutbox.resend}), and a call that
 * re-asks after a bridge restart finds its entry by key.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Clock,
  copyIntoExchange,
  describeError,
  type ExchangeOptions,
  type FrameOf,
  type Logger,
  type OutgoingFile,
  type Route,
  systemClock,
} from '@switchyard/protocol';
import { writeFileAtomic } from '../outbox/atomic-file.js';
import { type CheckedFile, checkFiles, FILE_LIMITS, type FileTool } from './file-check.js';

/** One tool call as the MCP endpoint asks it. */
export interface FileRequest {
  /** Idempotency key: the same call rejoined after a bridge restart carries the same id. */
  id: string;
  tool: FileTool;
  paths: string[];
  caption?: string | undefined;
}

/** What the tool call returns to the model: `ok: false` is a tool error. */
export interface ToolOutcome {
  ok: boolean;
  text: string;
}

/** Where a call's files go: the running turn, or the conversation's last route when none runs. */
export interface FileTarget {
  turnId?: string | undefined;
  route: Route;
}

/** Options of {@link FileOutbox}. */
export interface FileOutboxOptions {
  /** The outbox's index (created 0700). Kept in the session's state directory. */
  dir: string;
  /** Where the copies are made (prepared by the bridge at start). */
  exchange: ExchangeOptions;
  /** The CLI's working directory: relative paths start here, and files inside it may be sent. */
  workDir: string;
  /** More directories whose files may be sent. */
  extraDirs?: readonly string[] | undefined;
  /** Hands a reliable frame to the gateway channel (durable once it returns). */
  emit(frame: FrameOf<'file_send'>): void;
  /** How long a call waits for Telegram's acceptance before it answers "queued" (default 60 s). */
  waitMs?: number | undefined;
  /** Time for the entries' stamps and the call's wait (the conversation's clock; default the system's). */
  clock?: Clock | undefined;
  log: Logger;
}

interface Entry {
  frame: FrameOf<'file_send'>;
  notes: string[];
  outcome?: ToolOutcome;
  at: number;
}

const INDEX = 'index.json';
/** Settled entries kept for re-asked calls: the newest this many. */
const KEEP_SETTLED = 200;

/** The outbox: its index, and its copies in the exchange directory; see the module comment. */
export class FileOutbox {
  readonly #options: FileOutboxOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #waiters = new Map<string, Set<(outcome: ToolOutcome) => void>>();
  /** Calls being prepared (checked, copied) in this process, so a re-ask joins instead of copying twice. */
  readonly #preparing = new Map<string, Promise<ToolOutcome>>();
  #roots: string[] | undefined;

  readonly #clock: Clock;

  constructor(options: FileOutboxOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    const path = join(options.dir, INDEX);
    if (existsSync(path)) {
      const saved = JSON.parse(readFileSync(path, 'utf8')) as { entries: [string, Entry][] };
      for (const [id, entry] of saved.entries) this.#entries.set(id, entry);
    }
  }

  /** Files accepted but not yet settled by the gateway. */
  get pending(): number {
    let n = 0;
    for (const entry of this.#entries.values()) if (!entry.outcome) n++;
    return n;
  }

  /** Emits `file_send` again for every unsettled entry (after a restart; the gateway dedups by id). */
  resend(): void {
    for (const entry of this.#entries.values()) if (!entry.outcome) this.#options.emit(entry.frame);
  }

  /**
   * Handles one tool call: see the module comment. Resolves with the tool's result; never rejects (an
   * unexpected failure is a tool error that says so).
   */
  request(request: FileRequest, target: () => FileTarget | undefined): Promise<ToolOutcome> {
    const known = this.rejoin(request.id);
    if (known) return known;
    const work = this.#prepare(request, target)
      .catch((err: unknown): ToolOutcome => {
        this.#options.log.error({ err: describeError(err), fileId: request.id }, 'could not prepare a file');
        return { ok: false, text: `The file could not be prepared for sending: ${describeError(err)}` };
      })
      .finally(() => this.#preparing.delete(request.id));
    this.#preparing.set(request.id, work);
    return work;
  }

  /** The outcome of the call asked under `id` (waiting for it if unsettled); undefined if none is known. */
  rejoin(id: string): Promise<ToolOutcome> | undefined {
    const known = this.#entries.get(id);
    if (known) return known.outcome ? Promise.resolve(known.outcome) : this.#wait(id);
    return this.#preparing.get(id);
  }

  /** The gateway's answer: settles the entry, deletes its copies, wakes the waiting call. */
  settle(frame: FrameOf<'file_sent'>): void {
    const entry = this.#entries.get(frame.fileId);
    if (!entry || entry.outcome) return;
    const names = entry.frame.files.map((f) => f.name).join(', ');
    entry.outcome = frame.ok
      ? {
          ok: true,
          text: [`Sent ${names} to the chat.`, ...entry.notes].join(' '),
        }
      : { ok: false, text: `Telegram did not accept ${names}: ${frame.error ?? 'unknown error'}` };
    entry.at = this.#clock.now();
    for (const file of entry.frame.files) rmSync(file.path, { force: true });
    this.#save();
    this.#options.log.info({ fileId: frame.fileId, ok: frame.ok }, 'file send settled');
    const waiters = this.#waiters.get(frame.fileId);
    this.#waiters.delete(frame.fileId);
    for (const wake of waiters ?? []) wake(entry.outcome);
  }

  /** Wakes every waiting call with "queued" (the bridge is stopping; the entries stay for the next one). */
  stop(): void {
    for (const [id, waiters] of this.#waiters) for (const wake of waiters) wake(queued(id));
    this.#waiters.clear();
  }

  async #prepare(request: FileRequest, target: () => FileTarget | undefined): Promise<ToolOutcome> {
    const to = target();
    if (!to) return { ok: false, text: 'There is no conversation to send the file to.' };
    const checked = checkFiles(request.tool, request.paths, this.#options.workDir, this.#rootsNow());
    if (!checked.ok) return { ok: false, text: checked.error };
    const files: OutgoingFile[] = [];
    try {
      const stem = `out-${this.#clock.now()}-${randomBytes(6).toString('hex')}`;
      for (const [index, file] of checked.files.entries())
        files.push(await this.#copy(`${stem}-${index}`, file));
    } catch (err) {
      for (const file of files) rmSync(file.path, { force: true });
      return { ok: false, text: `nothing was sent: ${describeError(err)}` };
    }
    const caption = request.caption?.trim();
    const frame: FrameOf<'file_send'> = {
      type: 'file_send',
      fileId: request.id,
      ...(to.turnId !== undefined ? { turnId: to.turnId } : {}),
      route: to.route,
      files,
      ...(caption ? { caption: caption.slice(0, 4096) } : {}),
    };
    this.#entries.set(request.id, { frame, notes: checked.notes, at: this.#clock.now() });
    this.#save();
    this.#options.emit(frame);
    this.#options.log.info(
      { fileId: request.id, files: files.length, bytes: files.reduce((n, f) => n + f.size, 0) },
      'file send queued',
    );
    return this.#wait(request.id);
  }

  /**
   * Copies one checked file into the exchange under a name of ours (the call's id is the caller's word,
   * not a file name), by the kernel's copy: no pass through this process, which is what keeps a 20 MB
   * send close to a plain upload. Refuses a file that changed past the limits while it was copied.
   */
  async #copy(name: string, file: CheckedFile): Promise<OutgoingFile> {
    const path = await copyIntoExchange(this.#options.exchange, file.real, name);
    const { size } = await stat(path);
    if (size > FILE_LIMITS.documentBytes || size === 0) {
      rmSync(path, { force: true });
      throw new Error(`${file.name} changed while it was copied (now ${size} bytes)`);
    }
    const kind = file.kind === 'photo' && size > FILE_LIMITS.photoBytes ? 'document' : file.kind;
    return { path, name: file.name, kind, size };
  }

  #wait(id: string): Promise<ToolOutcome> {
    return new Promise((resolve) => {
      const waiters = this.#waiters.get(id) ?? new Set<(outcome: ToolOutcome) => void>();
      this.#waiters.set(id, waiters);
      const wake = (outcome: ToolOutcome): void => {
        this.#clock.clearTimeout(timer);
        resolve(outcome);
      };
      const timer = this.#clock.setTimeout(() => {
        waiters.delete(wake);
        resolve(queued(id));
      }, this.#options.waitMs ?? 60_000);
      waiters.add(wake);
    });
  }

  /** Real paths of the directories files may come from (resolved once; a missing extra dir is skipped). */
  #rootsNow(): string[] {
    if (this.#roots) return this.#roots;
    const roots: string[] = [];
    for (const dir of [this.#options.workDir, ...(this.#options.extraDirs ?? [])]) {
      try {
        roots.push(realpathSync(dir));
      } catch {
        this.#options.log.warn({ dir }, 'an allowed directory for sent files does not exist');
      }
    }
    this.#roots = roots;
    return roots;
  }

  #save(): void {
    const settled = [...this.#entries].filter(([, e]) => e.outcome).sort((a, b) => b[1].at - a[1].at);
    for (const [id] of settled.slice(KEEP_SETTLED)) this.#entries.delete(id);
    writeFileAtomic(join(this.#options.dir, INDEX), JSON.stringify({ entries: [...this.#entries] }));
  }
}

/** The answer of a call that outlived its wait: not an error, the file is on its way. */
function queued(id: string): ToolOutcome {
  return {
    ok: true,
    text: `Queued: the gateway is reconnecting, so Telegram has not confirmed the file yet; it will be sent once, as soon as the gateway is back (id ${id}).`,
  };
}
