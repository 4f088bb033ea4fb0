/**
 * The gateway's durable state in one SQLite file (WAL): Telegram updates until handled, the inbound
 * messages until the bridge acknowledges them, the reliable channel's outbox and peer cursor, the
 * turn ↔ Telegram message mapping, active pins, open prompts, and a few settings.
 *
 * Ownership: only this module issues SQL. Every method is synchronous (better-sqlite3), so a value is
 * durable against the process dying when the call returns — the property the intake and the channel
 * rely on for `kill -9` safety (see `synchronous` below for what an OS crash may lose).
 * The schema moves forward by numbered migrations recorded in `PRAGMA user_version`.
 * {@link GatewayStore.atomically} lets a caller make several of these writes (and the channel's append)
 * one transaction, for the few state changes that must not be split by a crash.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AppFrame, ChannelStore, PeerCursor, PendingFrame, Route } from '@switchyard/protocol';
import Database from 'better-sqlite3';

/** Ordered schema steps; index + 1 is the version each one brings the file to. Append only. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE updates (
     update_id INTEGER PRIMARY KEY,
     payload TEXT,
     handled INTEGER NOT NULL DEFAULT 0,
     received_at INTEGER NOT NULL);
   CREATE TABLE inbound (
     inbound_id TEXT PRIMARY KEY,
     chat_id INTEGER NOT NULL,
     thread_id INTEGER,
     telegram_message_id INTEGER NOT NULL,
     frame TEXT NOT NULL,
     seq INTEGER,
     state TEXT NOT NULL,
     placeholder_id INTEGER,
     placeholder_kind TEXT,
     created_at INTEGER NOT NULL);
   CREATE INDEX inbound_state ON inbound (state, created_at);
   CREATE TABLE channel_out (seq INTEGER PRIMARY KEY, frame TEXT NOT NULL);
   CREATE TABLE turns (
     turn_id TEXT PRIMARY KEY,
     chat_id INTEGER NOT NULL,
     thread_id INTEGER,
     state TEXT NOT NULL,
     request TEXT NOT NULL DEFAULT '',
     blocks TEXT NOT NULL DEFAULT '[]',
     message_ids TEXT NOT NULL DEFAULT '[]',
     card_message_id INTEGER,
     outcome TEXT,
     error TEXT,
     started_at INTEGER NOT NULL,
     ended_at INTEGER);
   CREATE TABLE pins (
     chat_id INTEGER NOT NULL,
     message_id INTEGER NOT NULL,
     turn_id TEXT NOT NULL,
     pinned_at INTEGER NOT NULL,
     PRIMARY KEY (chat_id, message_id));
   CREATE TABLE prompts (
     token TEXT PRIMARY KEY,
     request_id TEXT NOT NULL UNIQUE,
     kind TEXT NOT NULL,
     chat_id INTEGER NOT NULL,
     thread_id INTEGER,
     message_id INTEGER,
     payload TEXT NOT NULL,
     selection TEXT NOT NULL DEFAULT '{}',
     state TEXT NOT NULL,
     created_at INTEGER NOT NULL);
   CREATE TABLE refused (user_id INTEGER PRIMARY KEY);`,
  // 2: what a gateway restart must not forget — a question's partial answers, the chat each pending
  // command answers to, and the Telegram sends whose result (the new message's id) was not yet known.
  `ALTER TABLE prompts ADD COLUMN answers TEXT NOT NULL DEFAULT '{}';
   CREATE TABLE command_routes (
     command_id TEXT PRIMARY KEY,
     chat_id INTEGER NOT NULL,
     thread_id INTEGER,
     created_at INTEGER NOT NULL);
   CREATE TABLE sends (
     send_id INTEGER PRIMARY KEY AUTOINCREMENT,
     chat_id INTEGER NOT NULL,
     floor INTEGER NOT NULL,
     owner TEXT,
     text TEXT NOT NULL,
     other TEXT NOT NULL,
     started_at INTEGER NOT NULL);
   CREATE TABLE chat_marks (chat_id INTEGER PRIMARY KEY, last_bot_message_id INTEGER NOT NULL);`,
];

/** Where an inbound message is on its way to the CLI. `queued`/`sent` are the inbox. */
export type InboundState = 'queued' | 'sent' | 'acked' | 'taken' | 'unread';

/** One inbound Telegram message as the gateway keeps it. */
export interface InboundRow {
  inboundId: string;
  route: Route;
  telegramMessageId: number;
  frame: AppFrame & { type: 'user_message' };
  seq: number | undefined;
  state: InboundState;
  placeholderId: number | undefined;
  /** What the placeholder currently says: a reply waiting (`reply`), a steer (`steer`), or queued. */
  placeholderKind: string | undefined;
}

/** A turn as the gateway maps it onto Telegram messages. */
export interface TurnRow {
  turnId: string;
  route: Route;
  state: 'running' | 'ended' | 'rendered';
  request: string;
  /** Authoritative text blocks in order, keyed by block id. */
  blocks: { id: string; text: string }[];
  /** The reply's Telegram messages in order (the first is the placeholder it grew from). */
  messageIds: number[];
  cardMessageId: number | undefined;
  outcome: string | undefined;
  error: string | undefined;
  startedAt: number;
}

/** An active pin: recorded before `pinChatMessage`, removed after unpin (or a failed pin). */
export interface PinRow {
  chatId: number;
  messageId: number;
  turnId: string;
  pinnedAt: number;
}

/** An inline-keyboard prompt; `token` is what goes into `callback_data`, the rest stays here. */
export interface PromptRow {
  token: string;
  requestId: string;
  kind: 'permission' | 'question';
  route: Route;
  messageId: number | undefined;
  payload: unknown;
  /** Question index → chosen option indexes (multi-select toggles). */
  selection: Record<string, number[]>;
  /** Question text → answer, for the questions of a multi-question prompt answered so far. */
  answers: Record<string, string>;
  state: 'open' | 'answered' | 'closed';
}

/**
 * A `sendMessage` whose outcome is not known yet: recorded before the call, removed in the transaction
 * that records the new message's id (see `send-journal.ts`). One left at boot means the process died
 * while the call was in flight, and the message may exist without anyone knowing its id.
 */
export interface SendRow {
  sendId: number;
  chatId: number;
  /** The newest bot message id known in the chat when the call left: the message, if any, is above it. */
  floor: number;
  /** Who adopts the message if it is found (JSON of `send-journal.ts`'s `SendOwner`), or none. */
  owner: unknown;
  /** The text and options it was sent with, so it can be recognized without being changed. */
  text: string;
  other: Record<string, unknown>;
}

/** The gateway's SQLite store; see the module comment for its contract. */
export interface GatewayStore {
  /** The reliable channel's half that lives here (outbox + peer cursor). */
  readonly channel: ChannelStore;
  close(): void;
  /**
   * Runs `fn` as one transaction: every write in it (this store's and the channel's) commits together or
   * not at all, and an exception rolls them all back. `fn` must be synchronous.
   */
  atomically<T>(fn: () => T): T;

  // --- Telegram updates
  /** The offset that confirms everything already recorded. */
  nextUpdateOffset(): number;
  /** Records a batch (payload `undefined` for updates whose content must not be kept); returns the new ones. */
  recordUpdates(updates: { updateId: number; payload: unknown }[]): number[];
  /** Recorded but unhandled updates, in order: replayed at boot. */
  unhandledUpdates(): { updateId: number; payload: unknown }[];
  isHandled(updateId: number): boolean;
  markHandled(updateId: number): void;

  // --- inbound messages
  /** Writes an inbound message and marks its update handled, in one transaction. */
  addInbound(row: { inboundId: string; frame: AppFrame & { type: 'user_message' }; updateId?: number }): void;
  setPlaceholder(inboundId: string, messageId: number, kind: string): void;
  getInbound(inboundId: string): InboundRow | undefined;
  setInboundState(inboundIds: readonly string[], state: InboundState): void;
  /** Inbox rows not yet handed to the channel (a crash between write and send), oldest first. */
  queuedInbound(): InboundRow[];
  /** Rows the bridge has not acknowledged yet (the inbox). */
  inboxLength(): number;

  // --- turns
  upsertTurn(turn: { turnId: string; route: Route; request: string; startedAt: number }): TurnRow;
  getTurn(turnId: string): TurnRow | undefined;
  setTurnBlock(turnId: string, blockId: string, text: string): void;
  setTurnMessages(turnId: string, messageIds: readonly number[]): void;
  setTurnCard(turnId: string, messageId: number | undefined): void;
  endTurn(turnId: string, outcome: string, error: string | undefined): void;
  markTurnRendered(turnId: string): void;
  /** Turns that still need work after a restart: running, or ended but not rendered. */
  unfinishedTurns(): TurnRow[];

  // --- pins
  addPin(pin: PinRow): void;
  removePin(chatId: number, messageId: number): void;
  listPins(): PinRow[];

  // --- prompts
  addPrompt(prompt: Omit<PromptRow, 'token' | 'state' | 'selection' | 'answers' | 'messageId'>): PromptRow;
  getPromptByToken(token: string): PromptRow | undefined;
  getPromptByRequest(requestId: string): PromptRow | undefined;
  setPromptMessage(token: string, messageId: number): void;
  setPromptSelection(token: string, selection: Record<string, number[]>): void;
  /** Records the answers given so far to an open multi-question prompt. */
  setPromptAnswers(token: string, answers: Record<string, string>): void;
  /** Moves an open prompt to `state`; false when it was not open (answered twice, or gone). */
  closePrompt(token: string, state: 'answered' | 'closed'): boolean;
  openPrompts(route?: Route): PromptRow[];

  // --- commands waiting for the bridge's `command_result`
  addCommandRoute(commandId: string, route: Route): void;
  /** The chat a command answers to, removed as it is read; undefined when unknown (or taken already). */
  takeCommandRoute(commandId: string): Route | undefined;

  // --- sends in flight (see `SendRow`)
  /** Records a send about to leave; its floor is the chat's newest known bot message id. */
  beginSend(send: { chatId: number; owner: unknown; text: string; other: Record<string, unknown> }): number;
  /** The send's message is `messageId` (or it made none: `undefined`): drops the row, raises the chat's mark. */
  endSend(sendId: number, chatId: number, messageId: number | undefined): void;
  /** Sends left in flight by a previous process, oldest first. */
  pendingSends(): SendRow[];
  /** Telegram message ids of the user's messages in a chat that the inbox still knows. */
  inboundMessageIds(chatId: number): Set<number>;

  // --- settings
  getMeta(key: string): string | undefined;
  setMeta(key: string, value: string): void;
  /** True the first time a user is refused; false afterwards. */
  recordRefusal(userId: number): boolean;
}

/** Opens (creating if needed) the store at `path`, applying pending migrations. */
export function openGatewayStore(path: string): GatewayStore {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  // NORMAL in WAL mode: a commit is written to the WAL file (the OS page cache) before the call
  // returns, but not fsynced; checkpoints are. So every returned transaction survives the process
  // dying at any instant (`kill -9`, a crash, OOM) — the guarantee intake and the channel rely on.
  // Only an OS crash or power loss can lose the last transactions (the database stays consistent):
  // then an update may be confirmed to Telegram but not kept. FULL (one fsync per commit) closed that
  // too but tripled the update → placeholder latency; see the README's benchmark.
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  migrate(db);

  const meta = {
    get: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
    set: db.prepare(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
    ),
  };
  const getMeta = (key: string): string | undefined => meta.get.get(key)?.value;
  const setMeta = (key: string, value: string): void => {
    meta.set.run(key, value);
  };

  let streamId = getMeta('stream_id');
  if (streamId === undefined) {
    streamId = randomUUID();
    setMeta('stream_id', streamId);
    setMeta('next_seq', '1');
  }

  const q = {
    maxUpdate: db.prepare<[], { m: number | null }>('SELECT MAX(update_id) AS m FROM updates'),
    insertUpdate: db.prepare(
      'INSERT OR IGNORE INTO updates (update_id, payload, handled, received_at) VALUES (?, ?, 0, ?)',
    ),
    unhandled: db.prepare<[], { update_id: number; payload: string | null }>(
      'SELECT update_id, payload FROM updates WHERE handled = 0 ORDER BY update_id',
    ),
    handled: db.prepare<[number], { handled: number }>('SELECT handled FROM updates WHERE update_id = ?'),
    markHandled: db.prepare('UPDATE updates SET handled = 1, payload = NULL WHERE update_id = ?'),
    pruneUpdates: db.prepare('DELETE FROM updates WHERE handled = 1 AND update_id < ? AND received_at < ?'),
    insertInbound: db.prepare(
      `INSERT OR IGNORE INTO inbound (inbound_id, chat_id, thread_id, telegram_message_id, frame, state, created_at)
       VALUES (?, ?, ?, ?, ?, 'queued', ?)`,
    ),
    inbound: db.prepare<[string], InboundSql>('SELECT * FROM inbound WHERE inbound_id = ?'),
    queued: db.prepare<[], InboundSql>(
      "SELECT * FROM inbound WHERE state = 'queued' ORDER BY created_at, rowid",
    ),
    inboxLength: db.prepare<[], { n: number }>(
      "SELECT COUNT(*) AS n FROM inbound WHERE state IN ('queued','sent')",
    ),
    setPlaceholder: db.prepare(
      'UPDATE inbound SET placeholder_id = ?, placeholder_kind = ? WHERE inbound_id = ?',
    ),
    setInboundState: db.prepare('UPDATE inbound SET state = ? WHERE inbound_id = ?'),
    inboundSent: db.prepare(
      "UPDATE inbound SET seq = ?, state = 'sent' WHERE inbound_id = ? AND state = 'queued'",
    ),
    inboundAcked: db.prepare("UPDATE inbound SET state = 'acked' WHERE state = 'sent' AND seq <= ?"),
    pruneInbound: db.prepare("DELETE FROM inbound WHERE state NOT IN ('queued','sent') AND created_at < ?"),
    appendOut: db.prepare('INSERT INTO channel_out (seq, frame) VALUES (?, ?)'),
    ackOut: db.prepare('DELETE FROM channel_out WHERE seq <= ?'),
    pendingOut: db.prepare<[number], { seq: number; frame: string }>(
      'SELECT seq, frame FROM channel_out WHERE seq > ? ORDER BY seq',
    ),
    insertTurn: db.prepare(
      `INSERT OR IGNORE INTO turns (turn_id, chat_id, thread_id, state, request, started_at)
       VALUES (?, ?, ?, 'running', ?, ?)`,
    ),
    turn: db.prepare<[string], TurnSql>('SELECT * FROM turns WHERE turn_id = ?'),
    setBlocks: db.prepare('UPDATE turns SET blocks = ? WHERE turn_id = ?'),
    setMessages: db.prepare('UPDATE turns SET message_ids = ? WHERE turn_id = ?'),
    setCard: db.prepare('UPDATE turns SET card_message_id = ? WHERE turn_id = ?'),
    endTurn: db.prepare(
      "UPDATE turns SET state = 'ended', outcome = ?, error = ?, ended_at = ? WHERE turn_id = ? AND state = 'running'",
    ),
    renderTurn: db.prepare("UPDATE turns SET state = 'rendered' WHERE turn_id = ?"),
    unfinished: db.prepare<[], TurnSql>("SELECT * FROM turns WHERE state != 'rendered' ORDER BY started_at"),
    pruneTurns: db.prepare("DELETE FROM turns WHERE state = 'rendered' AND ended_at < ?"),
    addPin: db.prepare(
      'INSERT OR REPLACE INTO pins (chat_id, message_id, turn_id, pinned_at) VALUES (?, ?, ?, ?)',
    ),
    removePin: db.prepare('DELETE FROM pins WHERE chat_id = ? AND message_id = ?'),
    pins: db.prepare<[], { chat_id: number; message_id: number; turn_id: string; pinned_at: number }>(
      'SELECT * FROM pins ORDER BY pinned_at',
    ),
    addPrompt: db.prepare(
      `INSERT INTO prompts (token, request_id, kind, chat_id, thread_id, payload, state, created_at)
       VALUES (?, ?, ?, ?, ?, ?, 'open', ?)`,
    ),
    promptByToken: db.prepare<[string], PromptSql>('SELECT * FROM prompts WHERE token = ?'),
    promptByRequest: db.prepare<[string], PromptSql>('SELECT * FROM prompts WHERE request_id = ?'),
    setPromptMessage: db.prepare('UPDATE prompts SET message_id = ? WHERE token = ?'),
    setPromptSelection: db.prepare('UPDATE prompts SET selection = ? WHERE token = ?'),
    setPromptAnswers: db.prepare("UPDATE prompts SET answers = ? WHERE token = ? AND state = 'open'"),
    closePrompt: db.prepare("UPDATE prompts SET state = ? WHERE token = ? AND state = 'open'"),
    openPrompts: db.prepare<[], PromptSql>("SELECT * FROM prompts WHERE state = 'open' ORDER BY created_at"),
    refuse: db.prepare('INSERT OR IGNORE INTO refused (user_id) VALUES (?)'),
    addRoute: db.prepare(
      'INSERT OR REPLACE INTO command_routes (command_id, chat_id, thread_id, created_at) VALUES (?, ?, ?, ?)',
    ),
    route: db.prepare<[string], { chat_id: number; thread_id: number | null }>(
      'SELECT chat_id, thread_id FROM command_routes WHERE command_id = ?',
    ),
    dropRoute: db.prepare('DELETE FROM command_routes WHERE command_id = ?'),
    pruneRoutes: db.prepare('DELETE FROM command_routes WHERE created_at < ?'),
    mark: db.prepare<[number], { m: number }>(
      'SELECT last_bot_message_id AS m FROM chat_marks WHERE chat_id = ?',
    ),
    // Before the first journaled send in a chat (a new chat, or one from before migration 2), the
    // newest message the gateway knows there stands in for the mark.
    knownMax: db.prepare<[number, number], { m: number | null }>(
      `SELECT MAX(m) AS m FROM (
         SELECT MAX(telegram_message_id, COALESCE(placeholder_id, 0)) AS m FROM inbound WHERE chat_id = ?
         UNION ALL SELECT COALESCE(message_id, 0) FROM prompts WHERE chat_id = ?)`,
    ),
    raiseMark: db.prepare(
      `INSERT INTO chat_marks (chat_id, last_bot_message_id) VALUES (?, ?)
       ON CONFLICT(chat_id) DO UPDATE SET last_bot_message_id = MAX(last_bot_message_id, excluded.last_bot_message_id)`,
    ),
    beginSend: db.prepare(
      'INSERT INTO sends (chat_id, floor, owner, text, other, started_at) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    endSend: db.prepare('DELETE FROM sends WHERE send_id = ?'),
    sends: db.prepare<[], SendSql>('SELECT * FROM sends ORDER BY send_id'),
    inboundIds: db.prepare<[number], { id: number }>(
      'SELECT telegram_message_id AS id FROM inbound WHERE chat_id = ?',
    ),
  };

  const nextSeq = (): number => Number(getMeta('next_seq') ?? '1');

  const channel: ChannelStore = {
    streamId,
    append: db.transaction((frame: AppFrame): number => {
      const seq = nextSeq();
      q.appendOut.run(seq, JSON.stringify(frame));
      setMeta('next_seq', String(seq + 1));
      // The inbound row and its frame move together: a row is in the inbox until its seq is acked.
      if (frame.type === 'user_message') q.inboundSent.run(seq, frame.inboundId);
      return seq;
    }),
    acknowledge: db.transaction((upTo: number): void => {
      q.ackOut.run(upTo);
      q.inboundAcked.run(upTo);
    }),
    pendingAfter(after: number): PendingFrame[] {
      return q.pendingOut
        .all(after)
        .map((row) => ({ seq: row.seq, frame: JSON.parse(row.frame) as AppFrame }));
    },
    readPeer(): PeerCursor | undefined {
      const peer = getMeta('peer_stream_id');
      if (peer === undefined) return undefined;
      return { streamId: peer, lastSeen: Number(getMeta('peer_last_seen') ?? '0') };
    },
    writePeer: db.transaction((cursor: PeerCursor): void => {
      setMeta('peer_stream_id', cursor.streamId);
      setMeta('peer_last_seen', String(cursor.lastSeen));
    }),
  };

  const addInbound = db.transaction(
    (row: { inboundId: string; frame: AppFrame & { type: 'user_message' }; updateId?: number }) => {
      const f = row.frame;
      q.insertInbound.run(
        row.inboundId,
        f.route.chatId,
        f.route.threadId ?? null,
        f.telegramMessageId,
        JSON.stringify(f),
        Date.now(),
      );
      if (row.updateId !== undefined) q.markHandled.run(row.updateId);
    },
  );

  const recordUpdates = db.transaction((updates: { updateId: number; payload: unknown }[]): number[] => {
    const fresh: number[] = [];
    const now = Date.now();
    for (const u of updates) {
      const payload = u.payload === undefined ? null : JSON.stringify(u.payload);
      if (q.insertUpdate.run(u.updateId, payload, now).changes > 0) fresh.push(u.updateId);
    }
    return fresh;
  });

  const setTurnBlock = db.transaction((turnId: string, blockId: string, text: string) => {
    const row = q.turn.get(turnId);
    if (!row) return;
    const blocks = JSON.parse(row.blocks) as { id: string; text: string }[];
    const existing = blocks.find((b) => b.id === blockId);
    if (existing) existing.text = text;
    else blocks.push({ id: blockId, text });
    q.setBlocks.run(JSON.stringify(blocks), turnId);
  });

  const housekeeping = (): void => {
    const dayAgo = Date.now() - 24 * 3600_000;
    const max = q.maxUpdate.get()?.m ?? 0;
    // The newest update row stays: it carries the offset across restarts.
    q.pruneUpdates.run(max, dayAgo);
    q.pruneInbound.run(dayAgo);
    q.pruneTurns.run(dayAgo);
    q.pruneRoutes.run(dayAgo);
  };

  const endSend = db.transaction((sendId: number, chatId: number, messageId: number | undefined) => {
    q.endSend.run(sendId);
    if (messageId !== undefined) q.raiseMark.run(chatId, messageId);
  });
  housekeeping();

  return {
    channel,
    close: () => db.close(),
    atomically: <T>(fn: () => T): T => db.transaction(fn)(),
    nextUpdateOffset: () => (q.maxUpdate.get()?.m ?? -1) + 1,
    recordUpdates,
    unhandledUpdates: () =>
      q.unhandled.all().map((r) => ({
        updateId: r.update_id,
        payload: r.payload === null ? undefined : JSON.parse(r.payload),
      })),
    isHandled: (updateId) => q.handled.get(updateId)?.handled === 1,
    markHandled: (updateId) => {
      q.markHandled.run(updateId);
    },
    addInbound,
    setPlaceholder: (inboundId, messageId, kind) => {
      q.setPlaceholder.run(messageId, kind, inboundId);
    },
    getInbound: (inboundId) => toInbound(q.inbound.get(inboundId)),
    setInboundState: db.transaction((ids: readonly string[], state: InboundState) => {
      for (const id of ids) q.setInboundState.run(state, id);
    }),
    queuedInbound: () => q.queued.all().map((r) => toInbound(r) as InboundRow),
    inboxLength: () => q.inboxLength.get()?.n ?? 0,
    upsertTurn: (t) => {
      q.insertTurn.run(t.turnId, t.route.chatId, t.route.threadId ?? null, t.request, t.startedAt);
      return toTurn(q.turn.get(t.turnId)) as TurnRow;
    },
    getTurn: (turnId) => toTurn(q.turn.get(turnId)),
    setTurnBlock,
    setTurnMessages: (turnId, ids) => {
      q.setMessages.run(JSON.stringify(ids), turnId);
    },
    setTurnCard: (turnId, messageId) => {
      q.setCard.run(messageId ?? null, turnId);
    },
    endTurn: (turnId, outcome, error) => {
      q.endTurn.run(outcome, error ?? null, Date.now(), turnId);
    },
    markTurnRendered: (turnId) => {
      q.renderTurn.run(turnId);
    },
    unfinishedTurns: () => q.unfinished.all().map((r) => toTurn(r) as TurnRow),
    addPin: (pin) => {
      q.addPin.run(pin.chatId, pin.messageId, pin.turnId, pin.pinnedAt);
    },
    removePin: (chatId, messageId) => {
      q.removePin.run(chatId, messageId);
    },
    listPins: () =>
      q.pins.all().map((r) => ({
        chatId: r.chat_id,
        messageId: r.message_id,
        turnId: r.turn_id,
        pinnedAt: r.pinned_at,
      })),
    addPrompt: (p) => {
      const token = randomUUID().replaceAll('-', '').slice(0, 16);
      q.addPrompt.run(
        token,
        p.requestId,
        p.kind,
        p.route.chatId,
        p.route.threadId ?? null,
        JSON.stringify(p.payload),
        Date.now(),
      );
      return toPrompt(q.promptByToken.get(token)) as PromptRow;
    },
    getPromptByToken: (token) => toPrompt(q.promptByToken.get(token)),
    getPromptByRequest: (requestId) => toPrompt(q.promptByRequest.get(requestId)),
    setPromptMessage: (token, messageId) => {
      q.setPromptMessage.run(messageId, token);
    },
    setPromptSelection: (token, selection) => {
      q.setPromptSelection.run(JSON.stringify(selection), token);
    },
    setPromptAnswers: (token, answers) => {
      q.setPromptAnswers.run(JSON.stringify(answers), token);
    },
    closePrompt: (token, state) => q.closePrompt.run(state, token).changes > 0,
    openPrompts: (route) =>
      q.openPrompts
        .all()
        .map((r) => toPrompt(r) as PromptRow)
        .filter((p) => !route || (p.route.chatId === route.chatId && p.route.threadId === route.threadId)),
    addCommandRoute: (commandId, r) => {
      q.addRoute.run(commandId, r.chatId, r.threadId ?? null, Date.now());
    },
    takeCommandRoute: db.transaction((commandId: string): Route | undefined => {
      const row = q.route.get(commandId);
      if (!row) return undefined;
      q.dropRoute.run(commandId);
      return route(row.chat_id, row.thread_id);
    }),
    beginSend: (send) => {
      const floor = q.mark.get(send.chatId)?.m ?? q.knownMax.get(send.chatId, send.chatId)?.m ?? 0;
      const result = q.beginSend.run(
        send.chatId,
        floor,
        send.owner === undefined ? null : JSON.stringify(send.owner),
        send.text,
        JSON.stringify(send.other),
        Date.now(),
      );
      return Number(result.lastInsertRowid);
    },
    endSend,
    pendingSends: () =>
      q.sends.all().map((r) => ({
        sendId: r.send_id,
        chatId: r.chat_id,
        floor: r.floor,
        owner: r.owner === null ? undefined : (JSON.parse(r.owner) as unknown),
        text: r.text,
        other: JSON.parse(r.other) as Record<string, unknown>,
      })),
    inboundMessageIds: (chatId) => new Set(q.inboundIds.all(chatId).map((r) => r.id)),
    getMeta,
    setMeta,
    recordRefusal: (userId) => q.refuse.run(userId).changes > 0,
  };
}

function migrate(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  for (let v = version; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v] as string);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}

interface InboundSql {
  inbound_id: string;
  chat_id: number;
  thread_id: number | null;
  telegram_message_id: number;
  frame: string;
  seq: number | null;
  state: InboundState;
  placeholder_id: number | null;
  placeholder_kind: string | null;
}

interface TurnSql {
  turn_id: string;
  chat_id: number;
  thread_id: number | null;
  state: TurnRow['state'];
  request: string;
  blocks: string;
  message_ids: string;
  card_message_id: number | null;
  outcome: string | null;
  error: string | null;
  started_at: number;
}

interface SendSql {
  send_id: number;
  chat_id: number;
  floor: number;
  owner: string | null;
  text: string;
  other: string;
}

interface PromptSql {
  token: string;
  request_id: string;
  kind: PromptRow['kind'];
  chat_id: number;
  thread_id: number | null;
  message_id: number | null;
  payload: string;
  selection: string;
  answers: string;
  state: PromptRow['state'];
}

function route(chatId: number, threadId: number | null): Route {
  return threadId === null ? { chatId } : { chatId, threadId };
}

function toInbound(r: InboundSql | undefined): InboundRow | undefined {
  if (!r) return undefined;
  return {
    inboundId: r.inbound_id,
    route: route(r.chat_id, r.thread_id),
    telegramMessageId: r.telegram_message_id,
    frame: JSON.parse(r.frame) as InboundRow['frame'],
    seq: r.seq ?? undefined,
    state: r.state,
    placeholderId: r.placeholder_id ?? undefined,
    placeholderKind: r.placeholder_kind ?? undefined,
  };
}

function toTurn(r: TurnSql | undefined): TurnRow | undefined {
  if (!r) return undefined;
  return {
    turnId: r.turn_id,
    route: route(r.chat_id, r.thread_id),
    state: r.state,
    request: r.request,
    blocks: JSON.parse(r.blocks) as TurnRow['blocks'],
    messageIds: JSON.parse(r.message_ids) as number[],
    cardMessageId: r.card_message_id ?? undefined,
    outcome: r.outcome ?? undefined,
    error: r.error ?? undefined,
    startedAt: r.started_at,
  };
}

function toPrompt(r: PromptSql | undefined): PromptRow | undefined {
  if (!r) return undefined;
  return {
    token: r.token,
    requestId: r.request_id,
    kind: r.kind,
    route: route(r.chat_id, r.thread_id),
    messageId: r.message_id ?? undefined,
    payload: JSON.parse(r.payload) as unknown,
    selection: JSON.parse(r.selection) as Record<string, number[]>,
    answers: JSON.parse(r.answers) as Record<string, string>,
    state: r.state,
  };
}
