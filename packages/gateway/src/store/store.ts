/**
 * The gateway's durable state in one SQLite file (WAL): Telegram updates until handled, the inbound
 * messages until the bridge acknowledges them, the reliable channel's outbox and peer cursor, the
 * turn ↔ Telegram message mapping, active pins, open prompts, pending command routes, sends in flight,
 * files the agent sends until Telegram has them, and a few settings.
 *
 * Ownership: only the modules under `store/` issue SQL, one per table (or pair of tables that change
 * together); this module composes them into the one {@link GatewayStore} the rest of the gateway uses.
 * Every method is synchronous (better-sqlite3), so a value is durable against the process dying when
 * the call returns — the property the intake and the channel rely on for `kill -9` safety (see
 * `store/database.ts` for what an OS crash may lose). The schema is the one of `store/schema.ts`;
 * a file of another version is refused. {@link GatewayStore.atomically} lets a caller make several of
 * these writes (and the channel's append) one transaction, for the few state changes that must not be
 * split by a crash.
 */
import { type ChannelStore, type Clock, systemClock } from '@switchyard/protocol';
import { type AutomationRuns, createAutomationRuns } from './automation-runs.js';
import { createChannelOutbox } from './channel-outbox.js';
import { type CommandRoutes, createCommandRoutes } from './command-routes.js';
import { type ConversationSettingsTable, createConversationSettingsTable } from './conversation-settings.js';
import { openDatabase } from './database.js';
import { createFileTable, type FileTable } from './file-table.js';
import { createInbox, createInboxDelivery, type Inbox } from './inbox.js';
import { createPinTable, type PinTable } from './pin-table.js';
import { createPromptTable, type PromptTable } from './prompt-table.js';
import { createRetentionTable, type RetentionTable } from './retention.js';
import { createScheduleTable, type ScheduleTable } from './schedule-table.js';
import { createSendTable, type SendTable } from './send-table.js';
import { createSettings, type Settings } from './settings.js';
import { createSpendTable, type SpendTable } from './spend-table.js';
import { createTurnTable, type TurnTable } from './turn-table.js';
import { createUpdateLog, type UpdateLog } from './update-log.js';

export type { AutomationRunRow, NoteState } from './automation-runs.js';
export type { FileSendRow } from './file-table.js';
export type { InboundRow, InboundState } from './inbox.js';
export type { PinRow } from './pin-table.js';
export type { PromptRow } from './prompt-table.js';
export type { Forgotten } from './retention.js';
export type { ChatScheduleRow, ScheduleStateRow } from './schedule-table.js';
export type { SendRow } from './send-table.js';
export type { ConversationSpend } from './spend-table.js';
export type { TurnRow } from './turn-table.js';

/** The gateway's SQLite store; see the module comment for its contract. */
export interface GatewayStore
  extends UpdateLog,
    Inbox,
    TurnTable,
    PinTable,
    PromptTable,
    CommandRoutes,
    SendTable,
    FileTable,
    RetentionTable,
    AutomationRuns,
    ConversationSettingsTable,
    SpendTable,
    ScheduleTable,
    Settings {
  /** The reliable channel's half that lives here (outbox + peer cursor). */
  readonly channel: ChannelStore;
  close(): void;
  /**
   * Runs `fn` as one transaction: every write in it (this store's and the channel's) commits together or
   * not at all, and an exception rolls them all back. `fn` must be synchronous.
   */
  atomically<T>(fn: () => T): T;
}

/**
 * Opens (creating if needed) the store at `path` (see `store/schema.ts` for the
 * files it refuses); rows are stamped with `clock`'s time. Old finished rows stay
 * until `forgetFinishedBefore` (the gateway's retention, `retention.ts`) forgets them.
 */
export function openGatewayStore(path: string, clock: Pick<Clock, 'now'> = systemClock): GatewayStore {
  const db = openDatabase(path);
  const now = (): number => clock.now();
  const settings = createSettings(db);
  const updates = createUpdateLog(db, now);
  return {
    channel: createChannelOutbox(db, settings, createInboxDelivery(db)),
    close: () => db.close(),
    atomically: <T>(fn: () => T): T => db.transaction(fn)(),
    ...updates,
    ...createInbox(db, updates, now),
    ...createTurnTable(db, now),
    ...createPinTable(db),
    ...createPromptTable(db, now),
    ...createCommandRoutes(db, now),
    ...createSendTable(db, now),
    ...createFileTable(db, now),
    ...createRetentionTable(db),
    ...createAutomationRuns(db, now),
    ...createConversationSettingsTable(db, now),
    ...createSpendTable(db),
    ...createScheduleTable(db, now),
    ...settings,
  };
}
