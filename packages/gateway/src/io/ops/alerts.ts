/**
 * Alerts to an operator's chat (`alerts: { chat }` in the config): a Claude crash loop, a login that
 * expired, another poller on the bot token (409), repeated 429s, a nearly full disk, a turn gone silent,
 * and any other error the agent reports outside a conversation (which no chat's `/status` shows).
 *
 * Once per incident, not per event: an incident is a run of events of one kind with no gap longer than
 * `quietMs` (default 30 min) between them. A crash loop reported every minute is one alert; the same
 * kind after a quiet half hour is a new incident and alerts again. The rule is a pure function of the
 * kind's last event time (`isNewIncident`), the shell sends and remembers.
 */
import { statfsSync } from 'node:fs';
import {
  type Clock,
  createWakeTimer,
  type FrameOf,
  type Logger,
  type Route,
  systemClock,
} from '@switchyard/protocol';

/** What an alert is about. */
export type AlertKind = 'crash_loop' | 'auth' | 'conflict' | 'rate_limit' | 'disk' | 'stuck' | 'agent_error';

const TITLES: Record<AlertKind, string> = {
  crash_loop: 'Claude keeps crashing',
  auth: 'Claude’s login was refused',
  conflict: 'another process polls this bot token',
  rate_limit: 'Telegram keeps answering 429',
  disk: 'the disk is nearly full',
  stuck: 'a turn has gone silent',
  agent_error: 'the agent reported an error outside any conversation',
};

/** How often the disk's free space is checked while the alerts run. */
const DISK_CHECK_EVERY_MS = 5 * 60_000;

/** Whether an event of a kind last seen at `last` (ms) starts a new incident at `now`. */
export function isNewIncident(last: number | undefined, now: number, quietMs: number): boolean {
  return last === undefined || now - last > quietMs;
}

/** The bridge's operator events an operator is alerted to, as alert kinds. */
const ALERTED_EVENTS: Partial<Record<FrameOf<'operator_event'>['kind'], AlertKind>> = {
  crash_loop: 'crash_loop',
  auth: 'auth',
  stuck: 'stuck',
};

/** Options of {@link createAlerts}. */
export interface AlertOptions {
  agent: string;
  /** Where alerts go; without it nothing is sent (events are still logged by their owners). */
  chat: Route | undefined;
  /** Sends a plain message; never rejects. */
  send(route: Route, text: string): void;
  /** The state directory whose filesystem is watched for space. */
  stateDir: string;
  logger: Logger;
  /** Time for the quiet periods, the 429 window and the disk check; default the system clock. */
  clock?: Clock;
  /** How long after an alert another of its kind is held back; default 30 minutes. */
  quietMs?: number;
  /** 429s within a minute that make an incident (default 5). */
  rateLimitBurst?: number;
  /** Below this fraction of free space the disk is nearly full (default 0.05). */
  diskFreeRatio?: number;
  /** Reads the free fraction of the state directory's filesystem (tests inject it). */
  diskFree?: () => number;
}

/** The alert sender's handle. */
export interface Alerts {
  /** An event of `kind`: alerts if it starts an incident. */
  raise(kind: AlertKind, detail: string): void;
  /** Telegram answered 429 once: counted towards `rateLimitBurst` a minute. */
  tooManyRequests(): void;
  /** One Bot API call's result, as the bot reports each: a 429 counts (see {@link Alerts.tooManyRequests}). */
  callResult(result: { ok: boolean; error_code?: number }): void;
  /**
   * An operator event of the bridge: a crash loop, an expired login or a silent turn is alerted, and so
   * is any other event of no conversation — it is the operator's to hear, never another chat's `/status`.
   */
  operatorEvent(event: FrameOf<'operator_event'>): void;
  /** Polling's health: another poller on the bot token (a 409 conflict) is alerted. */
  pollingHealth(health: { ok: boolean; error?: string }): void;
  /** Looks at the disk now (also done every 5 minutes between `start` and `stop`). */
  checkDisk(): void;
  start(): void;
  stop(): void;
}

/** Creates the alert sender; see the module comment. */
export function createAlerts(options: AlertOptions): Alerts {
  const clock = options.clock ?? systemClock;
  const now = (): number => clock.now();
  const quietMs = options.quietMs ?? 30 * 60_000;
  const burst = options.rateLimitBurst ?? 5;
  const last = new Map<AlertKind, number>();
  const recent429: number[] = [];
  const diskFree =
    options.diskFree ??
    (() => {
      const stats = statfsSync(options.stateDir);
      return stats.bavail / stats.blocks;
    });

  const raise = (kind: AlertKind, detail: string): void => {
    const at = now();
    const fresh = isNewIncident(last.get(kind), at, quietMs);
    last.set(kind, at);
    if (!fresh || !options.chat) return;
    options.logger.info({ event: 'alert', kind }, 'alert sent to the operator chat');
    options.send(options.chat, `🚨 ${options.agent}: ${TITLES[kind]}\n${detail.slice(0, 1500)}`);
  };

  const checkDisk = (): void => {
    let free: number;
    try {
      free = diskFree();
    } catch {
      return; // the directory is not there yet
    }
    if (free < (options.diskFreeRatio ?? 0.05)) {
      raise(
        'disk',
        `${(free * 100).toFixed(1)}% free where the agent keeps its state (${options.stateDir}).`,
      );
    }
  };

  const tooManyRequests = (): void => {
    const at = now();
    recent429.push(at);
    while (recent429.length > 0 && at - (recent429[0] as number) > 60_000) recent429.shift();
    if (recent429.length >= burst) {
      raise('rate_limit', `${recent429.length} answers of 429 within a minute; replies are slowed down.`);
    }
  };

  /** The disk check's period: it re-arms from its own wake-up. */
  const wake = createWakeTimer(clock, (at) => {
    checkDisk();
    wake.arm(at + DISK_CHECK_EVERY_MS);
  });

  return {
    raise,
    tooManyRequests,
    callResult(result) {
      if (!result.ok && result.error_code === 429) tooManyRequests();
    },
    operatorEvent(event) {
      const kind = ALERTED_EVENTS[event.kind] ?? (event.route ? undefined : 'agent_error');
      if (kind) raise(kind, event.message);
    },
    pollingHealth(health) {
      if (health.error?.startsWith('conflict')) raise('conflict', health.error);
    },
    checkDisk,
    start() {
      wake.cancel();
      checkDisk();
      wake.arm(now() + DISK_CHECK_EVERY_MS);
    },
    stop() {
      wake.cancel();
    },
  };
}
