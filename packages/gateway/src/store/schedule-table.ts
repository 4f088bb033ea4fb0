/**
 * The schedules' two tables: `schedule_state`, what is decided of each schedule (config or chat-made) —
 * the core's {@link ScheduleState}, whether it is paused, and its latest run's inbound id (the schedule
 * is busy while that run's turn goes) — and `chat_schedules`, the schedules made from a chat.
 *
 * Invariant: a schedule's state is written in the transaction that injects its run
 * (`io/automation/schedules.ts`), so a due time decided is never decided again. A chat schedule's id
 * (`chat-<seq>`, AUTOINCREMENT) is never reused, so its runs' keys stay unique after it is deleted.
 */
import type { Route } from '@switchyard/protocol';
import type { ScheduleState } from '../core/automation/schedule.js';
import { type Db, storedRoute } from './database.js';

/** A schedule's recorded state, with what the shell keeps beside the core's. */
export interface ScheduleStateRow extends ScheduleState {
  paused: boolean;
  lastInbound: string | undefined;
}

/** A schedule made from a chat. */
export interface ChatScheduleRow {
  /** `chat-<seq>`. */
  id: string;
  name: string;
  route: Route;
  /** Exactly one of `cron` and `at` is set. */
  cron: string | undefined;
  at: number | undefined;
  timezone: string | undefined;
  prompt: string;
  createdBy: number | undefined;
  /** The agent's request that made it, if one did. */
  requestId: string | undefined;
  createdAt: number;
}

/** The schedules' tables. */
export interface ScheduleTable {
  scheduleStates(): Map<string, ScheduleStateRow>;
  /** Writes the core's state of a schedule, keeping its pause and latest run. */
  saveScheduleState(id: string, state: ScheduleState): void;
  /** The schedule's latest run is this inbound row. */
  setScheduleRun(id: string, inboundId: string): void;
  /** Pauses or resumes; a resumed schedule starts from `now` (nothing passed while paused runs). */
  setSchedulePaused(id: string, paused: boolean, now: number): void;
  /** Adds a chat schedule; one of the same `requestId` already made is returned instead. */
  addChatSchedule(row: Omit<ChatScheduleRow, 'id' | 'createdAt'>): ChatScheduleRow;
  chatSchedules(): ChatScheduleRow[];
  /** Deletes a chat schedule and its state; false when there was none. */
  deleteChatSchedule(id: string): boolean;
}

/** The schedule tables over `db`. */
export function createScheduleTable(db: Db, now: () => number): ScheduleTable {
  const q = {
    states: db.prepare<[], StateSql>('SELECT * FROM schedule_state'),
    save: db.prepare(
      `INSERT INTO schedule_state (schedule_id, decided_up_to, held, merged) VALUES (?, ?, ?, ?)
       ON CONFLICT (schedule_id) DO UPDATE SET decided_up_to = excluded.decided_up_to,
         held = excluded.held, merged = excluded.merged`,
    ),
    run: db.prepare('UPDATE schedule_state SET last_inbound = ? WHERE schedule_id = ?'),
    pause: db.prepare(
      `INSERT INTO schedule_state (schedule_id, decided_up_to, paused) VALUES (?, ?, ?)
       ON CONFLICT (schedule_id) DO UPDATE SET paused = excluded.paused, held = NULL, merged = 0,
         decided_up_to = CASE WHEN excluded.paused = 0 THEN excluded.decided_up_to ELSE decided_up_to END`,
    ),
    add: db.prepare(
      `INSERT INTO chat_schedules
         (name, chat_id, thread_id, cron, at, timezone, prompt, created_by, request_id, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    byRequest: db.prepare<[string], ChatSql>('SELECT * FROM chat_schedules WHERE request_id = ?'),
    chat: db.prepare<[], ChatSql>('SELECT * FROM chat_schedules ORDER BY seq'),
    one: db.prepare<[number], ChatSql>('SELECT * FROM chat_schedules WHERE seq = ?'),
    delete: db.prepare('DELETE FROM chat_schedules WHERE seq = ?'),
    deleteState: db.prepare('DELETE FROM schedule_state WHERE schedule_id = ?'),
  };
  return {
    scheduleStates: () =>
      new Map(
        q.states.all().map((r) => [
          r.schedule_id,
          {
            decidedUpTo: r.decided_up_to,
            held: r.held ?? undefined,
            merged: r.merged,
            paused: r.paused === 1,
            lastInbound: r.last_inbound ?? undefined,
          },
        ]),
      ),
    saveScheduleState: (id, state) => {
      q.save.run(id, state.decidedUpTo, state.held ?? null, state.merged);
    },
    setScheduleRun: (id, inboundId) => {
      q.run.run(inboundId, id);
    },
    setSchedulePaused: (id, paused, at) => {
      q.pause.run(id, at, paused ? 1 : 0);
    },
    addChatSchedule: (row) => {
      const made = row.requestId === undefined ? undefined : q.byRequest.get(row.requestId);
      if (made) return toChat(made);
      const createdAt = now();
      const { lastInsertRowid } = q.add.run(
        row.name,
        row.route.chatId,
        row.route.threadId ?? null,
        row.cron ?? null,
        row.at ?? null,
        row.timezone ?? null,
        row.prompt,
        row.createdBy ?? null,
        row.requestId ?? null,
        createdAt,
      );
      return toChat(q.one.get(Number(lastInsertRowid)) as ChatSql);
    },
    chatSchedules: () => q.chat.all().map(toChat),
    deleteChatSchedule: db.transaction((id: string) => {
      const seq = seqOf(id);
      if (seq === undefined || q.delete.run(seq).changes === 0) return false;
      q.deleteState.run(id);
      return true;
    }),
  };
}

/** The sequence number in a chat schedule's id, or undefined for any other id. */
function seqOf(id: string): number | undefined {
  const match = /^chat-(\d+)$/.exec(id);
  return match ? Number(match[1]) : undefined;
}

interface StateSql {
  schedule_id: string;
  decided_up_to: number;
  held: number | null;
  merged: number;
  paused: number;
  last_inbound: string | null;
}

interface ChatSql {
  seq: number;
  name: string;
  chat_id: number;
  thread_id: number | null;
  cron: string | null;
  at: number | null;
  timezone: string | null;
  prompt: string;
  created_by: number | null;
  request_id: string | null;
  created_at: number;
}

function toChat(r: ChatSql): ChatScheduleRow {
  return {
    id: `chat-${r.seq}`,
    name: r.name,
    route: storedRoute(r.chat_id, r.thread_id),
    cron: r.cron ?? undefined,
    at: r.at ?? undefined,
    timezone: r.timezone ?? undefined,
    prompt: r.prompt,
    createdBy: r.created_by ?? undefined,
    requestId: r.request_id ?? undefined,
    createdAt: r.created_at,
  };
}
