/**
 * The bridge's options and status types, and the naming of its state directory: what the cli maps an
 * agent's config onto. Imports nothing of the bridge's shells but types.
 */
import {
  type AgentState,
  type Clock,
  conversationKey,
  type ExchangeOptions,
  type Logger,
  type Route,
  type SessionInfo,
} from '@switchyard/protocol';
import { worktreeSpec } from './core/process/worktree.js';
import { DEFAULT_PERMISSION_POLICY, type PermissionPolicy } from './core/prompts/permission-policy.js';
import type { DeliveryStage } from './io/delivery/delivery.js';
import type { FilesConfig } from './io/mcp/file-tools.js';
import type { ConversationOverrides, ConversationSettings } from './io/session/conversation-options.js';

/** Options of {@link createBridge}; the cli maps the agent's config onto them. */
export interface BridgeOptions {
  /** The agent's name, as the gateway knows it (checked in the handshake). */
  agent: string;
  /** The gateway's Unix socket (for a bridge on another host: the one its ssh link listens on here). */
  socketPath: string;
  /** This Switchyard release, named in the handshake so that a version mismatch says what each side runs. */
  release?: string;
  /** Where the bridge keeps its state: the outbox, and a directory per conversation. Created (0700). */
  stateDir: string;
  /** The agent's working directory (absolute); the CLI runs there unless a conversation overrides it. */
  workDir: string;
  /** The `claude` binary: an absolute path, or a name looked up on `PATH`. */
  claudeBin: string;
  /** Extra arguments appended to the CLI's command line. */
  claudeArgs?: readonly string[];
  /** The CLI's environment (default: this process's); `CLAUDE_CONFIG_DIR` in it locates transcripts. */
  env?: NodeJS.ProcessEnv;
  model?: string;
  permissionMode?: string;
  /**
   * The mode of a webhook's or schedule's own conversation (a route with a `lane`): `default` unless
   * the operator says otherwise, never the chat's mode, and `bypassPermissions` is refused for it.
   */
  automationMode?: 'default' | 'acceptEdits' | 'plan';
  /** Which modes conversations may use and how far "always allow" reaches (`permission-policy.ts`). */
  permissions?: PermissionPolicy;
  /** Path of an MCP config file passed as `--mcp-config`. */
  mcpConfig?: string;
  /** The file tools (`send_file`, `send_photo`, `send_files`): on unless `enabled: false`. */
  files?: FilesConfig;
  /**
   * Where files cross to and from the gateway (protocol's `exchange.ts`): a file the agent sends is
   * copied here before its `file_send`. The gateway must be given the same directory. Default
   * `<stateDir>/files`, for one user only.
   */
  exchange?: ExchangeOptions;
  /**
   * The gateway runs on another host and shares no disk with the bridge (config's `bridge:` block): the
   * agent's files go to it, and users' attachments come from it, as protocol transfers
   * (`io/mcp/file-carrier.ts`, protocol's `node/transfer.ts`). Default false: the shared exchange.
   */
  filesOverProtocol?: boolean;
  /**
   * With `filesOverProtocol`: days after which files in this side's exchange (attachments received) are
   * deleted, at start and then daily (`io/files/exchange-sweep.ts`); default 7, the gateway's default.
   */
  retentionDays?: number;
  /** `per-chat` (default): each chat and forum topic is its own session. `shared`: one for the agent. */
  conversations?: 'per-chat' | 'shared';
  /**
   * A conversation's own working directory, model, permission mode or name (config overrides), and
   * `worktree: true` for a git worktree of its own (`core/process/worktree.ts`).
   */
  settingsFor?: (route: Route) => ConversationOverrides;
  /** Claude processes kept at most (default 4; each costs ~170 MB). */
  maxLiveSessions?: number;
  /** A process idle this long is stopped and resumed at the next message (default 30 min). */
  idleStopMs?: number;
  /** Start a new process (with `--resume`) when it exits by itself. */
  restartOnExit: boolean;
  /** A running turn with no output for this long is reported as stuck. */
  stuckAfterMs: number;
  /**
   * A turn the subscription's usage limit refuses waits, with every message kept, for the reset the CLI
   * reports, and then goes on (default true); false: it fails, as any API error does.
   */
  waitOutUsageLimit?: boolean;
  logger?: Logger;
  /** More than `maxExits` exits within `windowMs` is a crash loop: reported, not restarted. */
  crashLoop?: { maxExits: number; windowMs: number };
  /** SIGTERM → SIGKILL grace on a real shutdown (default 5000 ms). */
  stopGraceMs?: number;
  /** Stdout lines longer than this are skipped unparsed (default 2 MiB). */
  maxLineBytes?: number;
  /**
   * Fault injection for tests: called synchronously at each stage of a stdin write, so a test can kill
   * the process exactly there (`tests/bridge/bridge-entry.mjs`). Stages: `intent_saved` (the intent is on disk,
   * nothing written), `written` (the line is in the fifo, its frames not sent), `announced` (frames in
   * the outbox, the intent not yet cleared). Leave unset in production.
   */
  onDeliveryStage?: (stage: DeliveryStage, key: string) => void;
  /**
   * Time for every timer and timestamp of the bridge (the pool's tick, idle stops, restart backoff, the
   * stuck watchdog, delivery's fence, the channel's pings and reconnects); default `systemClock`.
   */
  clock?: Clock;
}

/** What `status()` reports. */
export interface BridgeStatus {
  /** The busiest state of any conversation (`idle` when none is live). */
  state: AgentState;
  connected: boolean;
  /** Every conversation with an object in memory (live, or served since the bridge started). */
  sessions: (SessionInfo & { key: string; detail?: string })[];
  /** The pid of the only live process, when exactly one is live (tests and `/status` of one chat). */
  pid?: number;
  sessionId?: string;
  detail?: string;
}

/** The bridge's lifecycle handle. */
export interface Bridge {
  /** Migrates old state, adopts every recorded process and starts connecting. */
  start(): Promise<void>;
  /**
   * `restart`: stop reading and disconnect, leaving the processes running for the next bridge to adopt.
   * `shutdown`: also stop every process (SIGTERM, grace, SIGKILL) and clear their records.
   */
  stop(kind: 'restart' | 'shutdown'): Promise<void>;
  status(): BridgeStatus;
}

/** The conversations' parent directory inside the state directory. */
export const CONVERSATIONS_DIR = 'conversations';
/** The key of the one session of an agent with `conversations: shared`. */
export const SHARED_KEY = 'shared';

/** A conversation's directory name: the key with characters a shell would trip on replaced. */
export function conversationDir(key: string): string {
  return `c${key.replace(/:/g, '_t').replace(/~/g, '_l')}`;
}

/** A conversation's settings: the agent's, with the conversation's own overrides (`settingsFor`). */
export function settingsOf(options: BridgeOptions, route: Route | undefined): ConversationSettings {
  const { worktree, ...overrides } =
    route && options.settingsFor ? definedOnly(options.settingsFor(route)) : {};
  const settings: ConversationSettings = {
    workDir: options.workDir,
    model: options.model,
    permissionMode: options.permissionMode,
    permissions: options.permissions,
    waitOutUsageLimit: options.waitOutUsageLimit,
    ...overrides,
  };
  if (route?.lane !== undefined) {
    // A webhook's or schedule's own conversation: the operator's automation mode, never the chat's, and
    // an "always allow" pressed in it stays in its session whatever the agent's scope (issue 27).
    settings.permissionMode =
      options.automationMode === undefined || (options.automationMode as string) === 'bypassPermissions'
        ? 'default'
        : options.automationMode;
    settings.permissions = {
      ...(settings.permissions ?? DEFAULT_PERMISSION_POLICY),
      alwaysAllowScope: 'session',
    };
    // Nor the rules people pressed in chats under `alwaysAllowScope: project` (they land only in the
    // working directory's settings.local.json, see `scopedSuggestions`); the operator's settings.json stays.
    settings.settingSources = 'user,project';
  }
  if (worktree !== true || !route) return settings;
  const spec = worktreeSpec(options.stateDir, settings.workDir, conversationDir(conversationKey(route)));
  return { ...settings, workDir: spec.path, worktree: spec };
}

/** Drops the keys whose value is `undefined` (config overrides that are not set). */
function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
