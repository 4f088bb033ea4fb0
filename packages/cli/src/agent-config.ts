/**
 * One agent's config as the services use it: the types with every default applied and every path
 * absolute, the resolution from the file's entry to them, and the settings of one conversation.
 */
import path from 'node:path';
import type { ScheduleOptions } from '@switchyard/gateway';
import {
  DEFAULT_ALLOWED_MODES,
  type PERMISSION_MODES,
  type PermissionMode,
  shortSocketPath,
} from '@switchyard/protocol';
import type { RawAgent } from './config-schema.js';
import { type RemoteBridge, resolveRemoteBridge } from './remote-bridge-config.js';
import { resolveSchedules } from './schedule-config.js';
import { resolveVoice, type VoiceConfig } from './voice-config.js';
import { resolveWebhooks, type WebhooksConfig } from './webhook-config.js';

/** One agent with every default applied and every path absolute. The token is still a source, not a secret. */
export interface AgentConfig {
  name: string;
  token:
    | { kind: 'inline'; value: string }
    | { kind: 'file'; path: string }
    | { kind: 'env'; name: string }
    | { kind: 'credential'; name: string }
    | undefined;
  apiRoot: string;
  allow: number[];
  allowChats: number[];
  /** Allowed users who see every conversation in `/sessions` and `/pins` (in their private chat). */
  operators: number[];
  workDir: string;
  claude: {
    bin: string;
    args: string[];
    env: Record<string, string>;
    model: string | undefined;
    permissionMode: (typeof PERMISSION_MODES)[number] | undefined;
    mcpConfig: string | undefined;
    restartOnExit: boolean;
    stuckAfterMs: number;
    waitOutUsageLimit: boolean;
  };
  stateDir: string;
  runtimeDir: string;
  socketPath: string;
  /**
   * Where files cross between the gateway and the bridge (attachments users send, files the agent
   * sends): `<stateDir>/files`, beside the two services' own directories. Under the state directory,
   * not the runtime one, because an attachment of a message waiting in the gateway's database must
   * outlive a reboot as the message does.
   */
  exchangeDir: string;
  /**
   * Where the bridge runs when it is not beside the gateway: the worker host, the ssh login that carries
   * the socket there, and the socket the bridge connects to on that host. Undefined: on this host.
   */
  bridge: RemoteBridge | undefined;
  card: { showDelayMs?: number; stuckAfterMs?: number; heartbeatMs?: number };
  /** How replies look in Telegram (see the gateway's `replies` option). */
  replies: 'rich' | 'classic';
  conversations: 'per-chat' | 'shared';
  maxLiveSessions: number;
  idleStopMs: number;
  /** Per-chat and per-topic settings, paths absolute. */
  chats: ChatConfig[];
  /** Where alerts go, if anywhere. */
  alerts: { chatId: number; threadId?: number } | undefined;
  /** The gateway's Prometheus endpoint (`host` default 127.0.0.1), or undefined when off. */
  metrics: { port: number; host: string } | undefined;
  /** The file tools: `enabled` (default true) and absolute extra directories files may be sent from. */
  files: { enabled: boolean; extraDirs: string[] };
  /** Days after which the gateway deletes finished rows and attachments users sent. */
  retention: { days: number };
  /** Modes `/mode` and the config may use; bypassPermissions only when listed. */
  allowedModes: PermissionMode[];
  /** Where an "always allow" rule applies: this conversation, or every one in its working directory. */
  alwaysAllowScope: 'session' | 'project';
  /** The mode of webhooks' and schedules' own sessions. */
  automationMode: 'default' | 'acceptEdits' | 'plan';
  /** How voice notes are transcribed, the key still a source; undefined when not configured. */
  voice: VoiceConfig | undefined;
  /** The agent's IANA time zone; undefined: UTC. */
  timezone: string | undefined;
  /** The daily cost budgets in USD; undefined: none. */
  budget:
    | {
        dailyUsd?: number | undefined;
        perUserDailyUsd?: number | undefined;
        turnEstimateUsd?: number | undefined;
        transcriptionUsdPerMinute?: number | undefined;
      }
    | undefined;
  /** The webhook receiver, secrets still sources; undefined: none. */
  webhooks: WebhooksConfig | undefined;
  /** The gateway's schedule options: time zone, the config's schedules, the grace. */
  schedules: ScheduleOptions;
}

/** One `chats:` entry, resolved. */
export interface ChatConfig {
  chatId: number;
  threadId: number | undefined;
  name: string | undefined;
  workDir: string | undefined;
  model: string | undefined;
  permissionMode: (typeof PERMISSION_MODES)[number] | undefined;
  listen: 'addressed' | 'all';
  /** Ask before the agent sends a file here; undefined: the bridge's default (in groups). */
  confirmFileSends: boolean | undefined;
  /** A git worktree of its own per conversation. */
  worktree: boolean | undefined;
}

/** What a `chats:` entry may set for a conversation. */
export interface ChatSettings {
  name?: string;
  workDir?: string;
  model?: string;
  permissionMode?: (typeof PERMISSION_MODES)[number];
  confirmFileSends?: boolean;
  worktree?: boolean;
}

/**
 * The settings of one conversation: its topic's entry over its chat's entry (the agent's own apply
 * where neither says).
 */
export function chatSettings(
  agent: Pick<AgentConfig, 'chats'>,
  route: { chatId: number; threadId?: number | undefined },
): ChatSettings {
  const chat = agent.chats.find((c) => c.chatId === route.chatId && c.threadId === undefined);
  const topic =
    route.threadId === undefined
      ? undefined
      : agent.chats.find((c) => c.chatId === route.chatId && c.threadId === route.threadId);
  const pick = (key: 'name' | 'workDir' | 'model' | 'permissionMode') => topic?.[key] ?? chat?.[key];
  const out: ChatSettings = {};
  const name = pick('name');
  if (name !== undefined) out.name = name;
  const workDir = pick('workDir');
  if (workDir !== undefined) out.workDir = workDir;
  const model = pick('model');
  if (model !== undefined) out.model = model;
  const permissionMode = topic?.permissionMode ?? chat?.permissionMode;
  if (permissionMode !== undefined) out.permissionMode = permissionMode;
  const confirmFileSends = topic?.confirmFileSends ?? chat?.confirmFileSends;
  if (confirmFileSends !== undefined) out.confirmFileSends = confirmFileSends;
  const worktree = topic?.worktree ?? chat?.worktree;
  if (worktree !== undefined) out.worktree = worktree;
  return out;
}

/** A validated config: the file it came from and its agents, ready for the factories. */
export interface Config {
  file: string;
  agents: AgentConfig[];
}

/** What config resolution may read of the process: its environment and working directory. */
export interface ConfigEnvironment {
  env: Record<string, string | undefined>;
  cwd: string;
}

/** The file's entry of one agent with the defaults applied and its paths resolved against `base`. */
export function resolveAgent(raw: RawAgent, base: string, { env }: ConfigEnvironment): AgentConfig {
  const abs = (p: string) => path.resolve(base, p);
  // Under systemd the template units give each agent its own directories; elsewhere they live beside the
  // config file. Each unit declares its service's own state (StateDirectory=switchyard/%i/gateway, …/bridge):
  // the agent's state directory is their parent, the same for both (its `files/` is shared by the two).
  const perAgent = (systemdDir: string | undefined, fallback: string) => systemdDir ?? fallback;
  const unitState =
    env.STATE_DIRECTORY !== undefined && /^(gateway|bridge)$/.test(path.basename(env.STATE_DIRECTORY))
      ? path.dirname(path.resolve(env.STATE_DIRECTORY))
      : env.STATE_DIRECTORY;
  const stateDir = raw.stateDir
    ? abs(raw.stateDir)
    : perAgent(unitState, path.join(base, '.switchyard', raw.name, 'state'));
  const runtimeDir = raw.runtimeDir
    ? abs(raw.runtimeDir)
    : perAgent(env.RUNTIME_DIRECTORY, path.join(base, '.switchyard', raw.name, 'run'));
  const token: AgentConfig['token'] =
    raw.token === undefined
      ? undefined
      : typeof raw.token === 'string'
        ? { kind: 'inline', value: raw.token }
        : 'file' in raw.token
          ? { kind: 'file', path: abs(raw.token.file) }
          : 'env' in raw.token
            ? { kind: 'env', name: raw.token.env }
            : { kind: 'credential', name: raw.token.credential };
  const claude = raw.claude ?? {};
  return {
    name: raw.name,
    token,
    apiRoot: (raw.apiRoot ?? 'https://api.telegram.org').replace(/\/+$/, ''),
    allow: raw.allow,
    allowChats: raw.allowChats ?? [],
    operators: raw.operators ?? [],
    workDir: abs(raw.workDir),
    claude: {
      bin: claude.bin ? (claude.bin.includes('/') ? abs(claude.bin) : claude.bin) : 'claude',
      args: claude.args ?? [],
      env: claude.env ?? {},
      model: claude.model,
      permissionMode: claude.permissionMode,
      mcpConfig: claude.mcpConfig ? abs(claude.mcpConfig) : undefined,
      restartOnExit: claude.restartOnExit ?? true,
      stuckAfterMs: claude.stuckAfterMs ?? 5 * 60_000,
      waitOutUsageLimit: claude.waitOutUsageLimit ?? true,
    },
    stateDir,
    runtimeDir,
    // A runtime directory the config names is the operator's choice (too long a path is an error at
    // load); the default beside a deep config file moves the socket to a short private place instead.
    socketPath: raw.runtimeDir
      ? path.join(runtimeDir, 'bridge.sock')
      : shortSocketPath(path.join(runtimeDir, 'bridge.sock'), { keepBasename: true }),
    exchangeDir: path.join(stateDir, 'files'),
    bridge: resolveRemoteBridge(raw.bridge, { name: raw.name, stateDir }, base),
    replies: raw.replies ?? 'rich',
    conversations: raw.conversations ?? 'per-chat',
    alerts: raw.alerts
      ? { chatId: raw.alerts.chat, ...(raw.alerts.topic !== undefined ? { threadId: raw.alerts.topic } : {}) }
      : undefined,
    maxLiveSessions: raw.maxLiveSessions ?? 4,
    idleStopMs: Math.round((raw.idleStopMinutes ?? 30) * 60_000),
    chats: (raw.chats ?? []).map((chat) => ({
      chatId: chat.chat,
      threadId: chat.topic,
      name: chat.name,
      workDir: chat.workDir ? abs(chat.workDir) : undefined,
      model: chat.model,
      permissionMode: chat.permissionMode,
      listen: chat.listen ?? 'addressed',
      confirmFileSends: chat.confirmFileSends,
      worktree: chat.worktree,
    })),
    metrics: raw.metrics ? { port: raw.metrics.port, host: raw.metrics.host ?? '127.0.0.1' } : undefined,
    card: {
      ...(raw.card?.showDelayMs !== undefined ? { showDelayMs: raw.card.showDelayMs } : {}),
      ...(raw.card?.stuckAfterMs !== undefined ? { stuckAfterMs: raw.card.stuckAfterMs } : {}),
      ...(raw.card?.heartbeatMs !== undefined ? { heartbeatMs: raw.card.heartbeatMs } : {}),
    },
    files: { enabled: raw.files?.enabled ?? true, extraDirs: (raw.files?.extraDirs ?? []).map(abs) },
    retention: { days: raw.retention?.days ?? 7 },
    allowedModes: [...(raw.allowedModes ?? DEFAULT_ALLOWED_MODES)],
    alwaysAllowScope: raw.alwaysAllowScope ?? 'session',
    automationMode: raw.automationMode ?? 'default',
    voice: resolveVoice(raw.voice, base),
    timezone: raw.timezone,
    budget: raw.budget,
    webhooks: resolveWebhooks(raw.webhooks, base),
    schedules: resolveSchedules(raw),
  };
}
