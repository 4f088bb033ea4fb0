/**
 * The store's one schema. The file's version is `PRAGMA user_version`: 0 for a file just created (the
 * schema is written, with the version, in one transaction), {@link SCHEMA_VERSION} for a file this build
 * wrote. Any other version is refused, not migrated: no release exists yet, so no deployed file has to
 * be carried forward. Once a release is tagged, changes go in as migrations from that version on.
 */
import type Database from 'better-sqlite3';

/** The version of {@link SCHEMA}, as `PRAGMA user_version` records it. */
export const SCHEMA_VERSION = 4;

/** Every table and index of the store, as this build writes them. */
export const SCHEMA = `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
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
    created_at INTEGER NOT NULL,
    -- The text the placeholder must be edited to and Telegram has not confirmed yet ("✓ taken", …),
    -- kept so that an edit lost to a crash or an outage is made again (store/inbox.ts).
    placeholder_due TEXT);
  CREATE INDEX inbound_state ON inbound (state, created_at);
  CREATE INDEX inbound_placeholder_due ON inbound (created_at) WHERE placeholder_due IS NOT NULL;
  CREATE TABLE channel_out (seq INTEGER PRIMARY KEY, frame TEXT NOT NULL);
  CREATE TABLE turns (
    turn_id TEXT PRIMARY KEY,
    chat_id INTEGER NOT NULL,
    thread_id INTEGER,
    -- A webhook's or schedule's own conversation in the chat (protocol's Route.lane); NULL: the chat's.
    lane TEXT,
    state TEXT NOT NULL,
    request TEXT NOT NULL DEFAULT '',
    blocks TEXT NOT NULL DEFAULT '[]',
    message_ids TEXT NOT NULL DEFAULT '[]',
    card_message_id INTEGER,
    outcome TEXT,
    error TEXT,
    started_at INTEGER NOT NULL,
    ended_at INTEGER,
    -- What the turn cost (the bridge's turn_ended.costUsd), for switchyard status's cost today.
    cost_usd REAL);
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
    created_at INTEGER NOT NULL,
    -- A question's partial answers, kept across a gateway restart.
    answers TEXT NOT NULL DEFAULT '{}');
  CREATE TABLE refused (user_id INTEGER PRIMARY KEY);
  -- The chat each pending command answers to.
  CREATE TABLE command_routes (
    command_id TEXT PRIMARY KEY,
    chat_id INTEGER NOT NULL,
    thread_id INTEGER,
    created_at INTEGER NOT NULL);
  -- Telegram sends whose result (the new message's id) is not known yet (send-journal.ts).
  CREATE TABLE sends (
    send_id INTEGER PRIMARY KEY AUTOINCREMENT,
    chat_id INTEGER NOT NULL,
    floor INTEGER NOT NULL,
    owner TEXT,
    text TEXT NOT NULL,
    other TEXT NOT NULL,
    started_at INTEGER NOT NULL);
  CREATE TABLE chat_marks (chat_id INTEGER PRIMARY KEY, last_bot_message_id INTEGER NOT NULL);
  -- Files the agent sends, from the bridge's file_send until Telegram has them (store/file-table.ts).
  CREATE TABLE file_sends (
    file_id TEXT PRIMARY KEY,
    chat_id INTEGER NOT NULL,
    frame TEXT NOT NULL,
    state TEXT NOT NULL,
    message_ids TEXT,
    error TEXT,
    created_at INTEGER NOT NULL,
    ended_at INTEGER);
  CREATE INDEX file_sends_state ON file_sends (state, created_at);
  -- Runs of schedules and webhooks by their unique key, written with the run's inbound row, so that a
  -- key is delivered once (store/automation-runs.ts).
  CREATE TABLE automation_runs (
    key TEXT PRIMARY KEY,
    inbound_id TEXT NOT NULL,
    chat_id INTEGER NOT NULL,
    thread_id INTEGER,
    origin_kind TEXT NOT NULL,
    origin_name TEXT NOT NULL,
    note TEXT NOT NULL,
    -- due (not yet in the chat), sent (note_message_id is its message) or failed.
    note_state TEXT NOT NULL,
    note_message_id INTEGER,
    created_at INTEGER NOT NULL,
    -- A webhook delivery's SHA-256 of what was signed: the same content under a new delivery id is the
    -- same delivery (a replay), refused by the unique index below as a key seen before is.
    content_sha256 TEXT);
  CREATE INDEX automation_runs_note_due ON automation_runs (created_at) WHERE note_state = 'due';
  CREATE UNIQUE INDEX automation_runs_content ON automation_runs (origin_kind, origin_name, content_sha256)
    WHERE content_sha256 IS NOT NULL;
  -- What /settings changed per conversation (store/conversation-settings.ts); NULL: the agent's default.
  CREATE TABLE conversation_settings (
    conversation TEXT PRIMARY KEY,
    replies TEXT,
    card INTEGER,
    updated_at INTEGER NOT NULL);
  -- What each turn cost and who started it, for the daily budgets and today's cost (store/spend-table.ts).
  CREATE TABLE spend (
    turn_id TEXT PRIMARY KEY,
    chat_id INTEGER NOT NULL,
    thread_id INTEGER,
    -- The sender of the message that opened the turn; NULL for a turn nobody typed.
    user_id INTEGER,
    -- That message's Telegram id: the agent's files reply to it (store/file-table.ts reads it).
    opener_message_id INTEGER,
    usd REAL,
    ended_at INTEGER);
  CREATE INDEX spend_ended ON spend (ended_at);
  -- The budget notices given, one per local day, budget and person (core/spend-gate.ts).
  CREATE TABLE budget_notices (key TEXT PRIMARY KEY, created_at INTEGER NOT NULL);
  -- What is decided of each schedule, config or chat-made (core/schedule.ts; store/schedule-table.ts).
  CREATE TABLE schedule_state (
    schedule_id TEXT PRIMARY KEY,
    decided_up_to INTEGER NOT NULL,
    held INTEGER,
    merged INTEGER NOT NULL DEFAULT 0,
    paused INTEGER NOT NULL DEFAULT 0,
    last_inbound TEXT);
  -- Schedules made from a chat (schedule_add); AUTOINCREMENT: an id is never given twice.
  CREATE TABLE chat_schedules (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    chat_id INTEGER NOT NULL,
    thread_id INTEGER,
    cron TEXT,
    at INTEGER,
    timezone TEXT,
    prompt TEXT NOT NULL,
    created_by INTEGER,
    -- The agent's schedule_request that made it: a request sent again adds nothing.
    request_id TEXT UNIQUE,
    created_at INTEGER NOT NULL,
    -- The allowed user who pressed Keep; NULL: it waits for one and never runs.
    kept_by INTEGER,
    -- No due time after this runs (Unix ms); NULL: none.
    expires_at INTEGER);`;

/**
 * Writes the schema into a new file, or checks an existing file is this build's; throws for a file of
 * any other version (see the module comment), naming the version and what to do.
 */
export function applySchema(db: Database.Database, path: string): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version === SCHEMA_VERSION) return;
  if (version !== 0) {
    throw new Error(
      `${path} has schema version ${version}, this gateway writes only version ${SCHEMA_VERSION}; ` +
        'it was written by a development build (no release migrates it): stop the gateway and delete its state directory',
    );
  }
  db.transaction(() => {
    db.exec(SCHEMA);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  })();
}
