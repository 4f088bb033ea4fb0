/**
 * The gateway's options and status types: what the cli maps the config file onto, and what `/status`
 * and operators read. Imports types only, and none from `gateway.ts`, `compose.ts` or `io/ops/boot.ts`, so
 * every module may import it without a cycle.
 */
import type { Clock, ExchangeOptions, Logger, PermissionMode, Route } from '@switchyard/protocol';
import type { SpendOptions } from './core/spend/spend-gate.js';
import type { BudgetOptions } from './core/telegram/send-pacing.js';
import type { ScheduleOptions } from './io/automation/schedule-options.js';
import type { WebhookOptions } from './io/automation/webhook-options.js';
import type { CardOptions } from './io/card/card-driver.js';
import type { GatewayMetrics } from './io/ops/metrics.js';
import type { VoiceOptions } from './io/voice/voice-types.js';

/** Everything the gateway needs; the cli maps the config file onto this. */
export interface GatewayOptions {
  /** The agent's name; the bridge must present the same one. */
  agent: string;
  /** The bot token. Never logged. */
  token: string;
  /**
   * The model is a stand-in (the sandbox's scripted model, which spends nothing): `/status` labels its
   * model and cost as simulated. The card's label is `card.simulatedCost`.
   */
  simulatedModel?: boolean;
  /** Bot API root; default `https://api.telegram.org`. The sandbox and tests point it at a local server. */
  apiRoot?: string;
  /** Telegram user ids allowed to use the agent. */
  allowUsers: readonly number[];
  /** Allowed users who see every conversation in `/sessions` and `/pins`, in their private chat only. */
  operators?: readonly number[];
  /** When given, only these chats; otherwise any chat an allowed user writes from. */
  allowChats?: readonly number[];
  /**
   * Groups where the bot reads every message (`listen: all`, for a group with privacy mode off). In
   * other groups it reads only what is addressed to it: a mention, a reply to it, a command.
   */
  listenAllChats?: readonly number[];
  /** An operator's chat for alerts (crash loop, login, 409, repeated 429s, disk, a stuck turn). */
  alertChat?: Route;
  /** Directory for `gateway.sqlite`; this user's alone. */
  stateDir: string;
  /**
   * Where files cross to and from the bridge: attachments users send are saved here, and the bridge's
   * `file_send` may name files here only (protocol's `exchange.ts`). The bridge must be given the same
   * directory. Default `<stateDir>/files`, for one user only.
   */
  exchange?: ExchangeOptions;
  /**
   * The bridge runs on another host and shares no disk with the gateway (config's `bridge:` block):
   * attachments go to it, and its files come back, as protocol transfers (`io/bridge/file-carrier.ts`)
   * instead of paths in the exchange directory. Default false: the bridge reads this side's exchange.
   */
  filesOverProtocol?: boolean;
  /**
   * The bridge runs on another host (config's `bridge:` block): `host` is how its chats name it
   * (`user@host`). While it cannot be reached for longer than `unreachableNoticeMs` (default 30 s), each
   * chat with a message waiting is told once per outage (`io/bridge/host-notice.ts`).
   */
  remoteBridge?: { host: string; unreachableNoticeMs?: number };
  /** The Unix socket the bridge connects to. */
  socketPath: string;
  /** This Switchyard release, named in the handshake so that a version mismatch says what each side runs. */
  release?: string;
  /**
   * Exact modes of the socket and of its directory (created if missing); default 0o600 and the directory
   * left as it is. 0o660 / 0o750 when the bridge runs as another user of the directory's group.
   */
  socketMode?: number;
  socketDirectoryMode?: number;
  /**
   * Days after which finished SQLite rows and the attachments users sent are deleted (at start and
   * daily; `retention.ts`); default 7.
   */
  retentionDays?: number;
  /** Progress-card timing (show delay, coalescing, heartbeat, zombie ceiling). */
  card?: CardOptions;
  /** Models `/model` accepts; empty accepts any name. Default: opus, sonnet, haiku. */
  models?: readonly string[];
  /** Modes `/mode` may switch to; default every mode but bypassPermissions (`DEFAULT_ALLOWED_MODES`). */
  allowedModes?: readonly PermissionMode[];
  /** Restarts the bridge (systemd or the dev supervisor); `/restart` says so when absent. */
  restartBridge?: () => Promise<void>;
  logger?: Logger;
  /** Send pacing per chat; defaults stay under Telegram's limits. */
  budget?: BudgetOptions;
  /**
   * Where turns, Telegram calls and the bridge connection are counted (`io/ops/metrics.ts`); default none.
   */
  metrics?: GatewayMetrics;
  /**
   * How replies look: `rich` (default) streams a draft in private chats and sends one rich message
   * (tables, headings …), and edits the placeholder into a rich message in groups; `classic` edits a
   * "…" placeholder with plain text and renders HTML at the end, split at 4,096 characters.
   */
  replies?: 'rich' | 'classic';
  /** Time for the gateway's timers and `now`; default the system clock (tests pass a `ManualClock`). */
  clock?: Clock;
  /**
   * How long a message waits silently for a connecting bridge (after a start or a restart) before its
   * chat is told the agent is restarting; default 3 s (`core/turns/arrival.ts`).
   */
  bridgeGraceMs?: number;
  /**
   * How often placeholder edits Telegram did not confirm are tried again; default 15 s (tests shorten it).
   */
  placeholderRetryMs?: number;
  /**
   * How long `/status` waits for the bridge's answer before replying from the gateway's view; default 3 s
   * (tests shorten it).
   */
  statusTimeoutMs?: number;
  /**
   * How voice notes, audio files and video notes are transcribed (`io/voice/transcriber.ts`): an
   * OpenAI-compatible server or a local program. Absent: they reach the agent as files, with a reply
   * saying no transcriber is configured.
   */
  voice?: VoiceOptions;
  /**
   * The daily cost budgets (`io/spend/spend-ledger.ts`): the agent's and each user's, in USD a day of the
   * agent's time zone (default UTC); a new turn over one is not started. Absent: no budget, and today's
   * cost is still counted in UTC.
   */
  spend?: SpendOptions;
  /** The webhook receiver (`io/automation/webhook-server.ts`); absent: none listens. */
  webhooks?: WebhookOptions;
  /** Scheduled prompts (`io/automation/schedules.ts`): the config's, the time zone and the grace. */
  schedules?: ScheduleOptions;
  /** Long-polling knobs; the defaults suit Telegram. */
  polling?: { timeoutSec?: number; stallGraceMs?: number; backoff?: { initialMs: number; maxMs: number } };
}

/** A snapshot for `/status` and operators. */
export interface GatewayStatus {
  bridgeConnected: boolean;
  agentState: string | undefined;
  model: string | undefined;
  mode: string | undefined;
  runningTurns: { turnId: string; route: Route }[];
  inbox: number;
  openPrompts: number;
  pins: number;
  lastError: string | undefined;
  polling: { ok: boolean; error?: string };
  /** One conversation's `/settings` (replies, progress card); absent for the agent's view. */
  settings?: { replies: 'rich' | 'classic'; card: boolean };
  /** When this conversation's usage limit resets (epoch ms), while its turn waits for it. */
  usageLimitUntil?: number;
  /** The agent's time zone (`/status` says the reset time in it). */
  timeZone?: string;
  /**
   * What turns that ended today (the agent's time zone) cost: this conversation's (with a route) and the
   * agent's.
   */
  costToday?: {
    conversationUsd: number | undefined;
    agentUsd: number;
    day: string;
    dailyUsd: number | undefined;
  };
}
