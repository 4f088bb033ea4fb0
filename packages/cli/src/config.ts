/**
 * The host's config file: which agents run here and how. It is the only place Switchyard reads
 * settings from; the cli turns it into typed options for the gateway and bridge factories.
 *
 * Resolution of the file: `--config PATH`, else `$SWITCHYARD_CONFIG`, else `./switchyard.yaml`.
 * A bad file is refused before anything starts, with every problem listed by its path.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ScheduleOptions } from '@switchyard/gateway';
import {
  DEFAULT_ALLOWED_MODES,
  PERMISSION_MODES,
  type PermissionMode,
  shortSocketPath,
} from '@switchyard/protocol';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { configIssueMessage, describeYamlError, dropUnknownKeys } from './config-messages.js';
import { resolveSchedules, scheduleKeys } from './schedule-config.js';
import { describeVoice, resolveVoice, type VoiceConfig, voiceSchema } from './voice-config.js';
import {
  budgetSchema,
  describeWebhooks,
  resolveWebhooks,
  type WebhooksConfig,
  webhooksSchema,
} from './webhook-config.js';

/** A problem with the config the operator must fix; the message lists every one found. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file} is not a valid Switchyard config:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

const telegramUserId = z.number({ error: 'expected a Telegram user id (integer)' }).int({
  error: 'expected a Telegram user id (integer)',
});
const telegramChatId = z.number({ error: 'expected a Telegram chat id (integer)' }).int({
  error: 'expected a Telegram chat id (integer)',
});
const agentName = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, {
  error:
    'expected an agent name: 1-32 lowercase letters, digits, "-" or "_" (it names systemd units and directories)',
});

/** What a bot token from @BotFather looks like: the bot's id, a colon, the secret. */
export const BOT_TOKEN = /^\d+:[\w-]{20,}$/;

/**
 * The bot token: inline, from a file (first line), from an environment variable, or from a systemd
 * credential (`LoadCredential=NAME:…` in the gateway unit: `$CREDENTIALS_DIRECTORY/NAME`).
 */
const tokenSource = z.union(
  [
    z.string().regex(BOT_TOKEN, { error: 'expected a bot token like 123456:ABC-DEF… (from @BotFather)' }),
    z.strictObject({ file: z.string().min(1) }),
    z.strictObject({
      env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, { error: 'expected an environment variable name' }),
    }),
    z.strictObject({
      credential: z.string().regex(/^[A-Za-z0-9_.-]+$/, { error: 'expected a systemd credential name' }),
    }),
  ],
  { error: 'expected a bot token string, { file: PATH }, { env: VARIABLE } or { credential: NAME }' },
);

const cardSchema = z
  .strictObject({
    showDelayMs: z.number().int().nonnegative().optional(),
    stuckAfterMs: z.number().int().positive().optional(),
    heartbeatMs: z.number().int().positive().optional(),
  })
  .optional();

/**
 * Per-chat or per-topic settings: a forum whose topics are projects gets one working directory per topic.
 * A topic's entry inherits its chat's entry, which inherits the agent's.
 */
const chatSchema = z.strictObject({
  chat: telegramChatId,
  topic: z.number({ error: 'expected a forum topic id (integer)' }).int().positive().optional(),
  name: z.string().min(1).max(200).optional(),
  workDir: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  permissionMode: z.enum(PERMISSION_MODES).optional(),
  /** `addressed` (default): in groups, only mentions, replies to the bot and commands. `all`: everything. */
  listen: z.enum(['addressed', 'all']).optional(),
  /** Ask (a permission prompt) before the agent sends a file here; default: in groups. */
  confirmFileSends: z.boolean().optional(),
  /** Each conversation here gets its own git worktree of `workDir` (a repository), branch `switchyard/…`. */
  worktree: z.boolean().optional(),
});

const agentSchema = z.strictObject({
  name: agentName,
  /** Absent: the agent runs against the local Telegram sandbox. */
  token: tokenSource.optional(),
  apiRoot: z.url({ error: 'expected the Bot API root URL, like https://api.telegram.org' }).optional(),
  allow: z
    .array(telegramUserId)
    .min(1, { error: 'list at least one Telegram user id allowed to talk to this agent' }),
  allowChats: z.array(telegramChatId).optional(),
  /** Users who see every conversation's `/sessions` and `/pins`, in their private chat with the bot. */
  operators: z.array(telegramUserId).optional(),
  workDir: z.string().min(1, { error: 'expected the working directory of the agent' }),
  claude: z
    .strictObject({
      bin: z.string().min(1).optional(),
      args: z.array(z.string()).optional(),
      env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional(),
      model: z.string().min(1).optional(),
      permissionMode: z.enum(PERMISSION_MODES).optional(),
      mcpConfig: z.string().min(1).optional(),
      restartOnExit: z.boolean().optional(),
      stuckAfterMs: z.number().int().positive().optional(),
      /** Wait for a subscription's usage limit to reset and go on (default true), or fail the turn. */
      waitOutUsageLimit: z.boolean().optional(),
    })
    .optional(),
  stateDir: z.string().min(1).optional(),
  runtimeDir: z.string().min(1).optional(),
  card: cardSchema,
  /** `rich` (default): drafts and rich messages; `classic`: the "…" placeholder edited, HTML at the end. */
  replies: z.enum(['rich', 'classic']).optional(),
  /** `per-chat` (default): every chat and forum topic is its own Claude session. `shared`: one for all. */
  conversations: z.enum(['per-chat', 'shared']).optional(),
  /** Claude processes kept at most (each 190–234 MB RSS measured); the least recently used idle one is stopped. */
  maxLiveSessions: z.number().int().min(1).max(64).optional(),
  /** An idle Claude process is stopped after this long; the next message resumes it. */
  idleStopMinutes: z.number().positive().optional(),
  chats: z.array(chatSchema).optional(),
  /** An operator's chat (or forum topic) for alerts: crash loop, login, 409, repeated 429s, disk, stuck turn. */
  alerts: z.strictObject({ chat: telegramChatId, topic: z.number().int().positive().optional() }).optional(),
  /** The gateway's Prometheus endpoint; off when absent. */
  metrics: z
    .strictObject({ port: z.number().int().min(1).max(65535), host: z.string().min(1).optional() })
    .optional(),
  /** Finished SQLite rows and attachments users sent are deleted after this many days (default 7). */
  retention: z.strictObject({ days: z.number().positive() }).optional(),
  /**
   * Permission modes conversations may be in, by `/mode` or by config (default: all but
   * bypassPermissions), and how far an "always allow" press reaches: `session` (default) this
   * conversation only, `project` every conversation in its working directory.
   */
  allowedModes: z.array(z.enum(PERMISSION_MODES)).min(1, { error: 'list at least one mode' }).optional(),
  alwaysAllowScope: z.enum(['session', 'project']).optional(),
  /** The agent's file tools (send_file, send_photo, send_files): on by default. */
  files: z
    .strictObject({ enabled: z.boolean().optional(), extraDirs: z.array(z.string().min(1)).optional() })
    .optional(),
  /** How voice notes are transcribed (`voice-config.ts`); absent: they reach the agent as files. */
  voice: voiceSchema.optional(),
  /** Daily cost budgets in USD, the agent's and each user's (`webhook-config.ts`). */
  budget: budgetSchema.optional(),
  /** The webhook receiver (`webhook-config.ts`); none when absent. */
  webhooks: webhooksSchema.optional(),
  /** The agent's time zone and scheduled prompts (`schedule-config.ts`). */
  ...scheduleKeys,
});

const fileSchema = z.strictObject({
  agents: z.array(agentSchema).min(1, { error: 'list at least one agent' }),
});

/** The config file as validated, before defaults and path resolution. */
export type RawConfig = z.infer<typeof fileSchema>;
type RawAgent = z.infer<typeof agentSchema>;

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
  /** How voice notes are transcribed, the key still a source; undefined when not configured. */
  voice: VoiceConfig | undefined;
  /** The agent's IANA time zone; undefined: UTC. */
  timezone: string | undefined;
  /** The daily cost budgets in USD; undefined: none. */
  budget: { dailyUsd?: number | undefined; perUserDailyUsd?: number | undefined } | undefined;
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

/** Where the config file is, by the documented order of precedence. */
export function resolveConfigPath(flag: string | undefined, { env, cwd }: ConfigEnvironment): string {
  // An empty $SWITCHYARD_CONFIG counts as unset (as from a unit's `Environment=SWITCHYARD_CONFIG=`).
  return path.resolve(cwd, flag ?? (env.SWITCHYARD_CONFIG || 'switchyard.yaml'));
}

/** Reads, parses and validates a config file. Throws `ConfigError` listing every problem. */
export function loadConfig(file: string, environment: ConfigEnvironment): Config {
  return parseConfig(readConfigText(file), file, environment);
}

/**
 * Reads and validates a config file without refusing it: every problem, and the config when its
 * problems do not keep it from being used for further checks (unknown keys only), so `config check`
 * can go on to the host. Throws `ConfigError` only when the file cannot be read.
 */
export function checkConfigFile(file: string, environment: ConfigEnvironment): ConfigValidation {
  return validateConfig(readConfigText(file), file, environment);
}

function readConfigText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const hint =
      code === 'ENOENT'
        ? 'no such file: copy deploy/switchyard.example.yaml there, or pass --config PATH'
        : code === 'EISDIR'
          ? 'is a directory: pass the config file itself (--config PATH/switchyard.yaml)'
          : String(err);
    throw new ConfigError(file, [hint]);
  }
}

/** Parses and validates config text (YAML). `file` is used for messages and to resolve relative paths. */
export function parseConfig(text: string, file: string, environment: ConfigEnvironment): Config {
  const { config, problems } = validateConfig(text, file, environment);
  if (config === undefined || problems.length > 0) throw new ConfigError(file, problems);
  return config;
}

/**
 * Every problem of config text, and the config as it would be used when the only problems are
 * unknown keys (which are dropped for it). A config with problems is never started; it is returned
 * so that what it points at can still be checked.
 */
export interface ConfigValidation {
  config: Config | undefined;
  problems: string[];
}

/** `agents[i].name: "x" is used by another agent` for each repeated name of the raw file, whatever else is wrong. */
function duplicateNames(data: unknown): string[] {
  const agents = (data as { agents?: unknown } | null)?.agents;
  if (!Array.isArray(agents)) return [];
  const names = new Set<string>();
  const problems: string[] = [];
  agents.forEach((agent: unknown, i) => {
    const name = (agent as { name?: unknown } | null)?.name;
    if (typeof name !== 'string') return;
    if (names.has(name)) problems.push(`agents[${i}].name: "${name}" is used by another agent`);
    names.add(name);
  });
  return problems;
}

/** Validates config text; see {@link ConfigValidation}. */
export function validateConfig(text: string, file: string, environment: ConfigEnvironment): ConfigValidation {
  const lines = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true, lineCounter: lines });
  if (doc.errors.length > 0) {
    return { config: undefined, problems: doc.errors.map((e) => describeYamlError(e, doc, lines)) };
  }
  const data: unknown = doc.toJS();
  // Named before the schema's verdict: a duplicate is as wrong as any other mistake, and reported with them.
  const schemaProblems: string[] = duplicateNames(data);
  let result = fileSchema.safeParse(data, { error: configIssueMessage });
  if (!result.success) {
    const { issues } = result.error;
    schemaProblems.push(
      ...issues.map((issue) =>
        issue.path.length === 0 ? issue.message : `${formatPath(issue.path)}: ${issue.message}`,
      ),
    );
    if (issues.every((issue) => issue.code === 'unrecognized_keys')) {
      dropUnknownKeys(data, issues);
      result = fileSchema.safeParse(data, { error: configIssueMessage });
    }
    if (!result.success) return { config: undefined, problems: schemaProblems };
  }
  const problems: string[] = [...schemaProblems];
  result.data.agents.forEach((agent, i) => {
    (agent.operators ?? []).forEach((id, j) => {
      if (!agent.allow.includes(id)) {
        problems.push(
          `agents[${i}].operators[${j}]: user ${id} is not in allow; an operator must be allowed`,
        );
      }
    });
    const mode = agent.claude?.permissionMode;
    const allowed: readonly string[] = agent.allowedModes ?? DEFAULT_ALLOWED_MODES;
    if (mode !== undefined && !allowed.includes(mode)) {
      problems.push(
        `agents[${i}].claude.permissionMode: ${mode} is not in allowedModes (${allowed.join(', ')}); add it there to allow it`,
      );
    }
    const places = new Set<string>();
    (agent.chats ?? []).forEach((chat, j) => {
      const place = `${chat.chat}:${chat.topic ?? ''}`;
      if (places.has(place)) {
        problems.push(
          `agents[${i}].chats[${j}]: chat ${chat.chat}${chat.topic ? ` topic ${chat.topic}` : ''} is listed twice`,
        );
      }
      places.add(place);
      const allowed: readonly string[] = agent.allowedModes ?? DEFAULT_ALLOWED_MODES;
      if (chat.permissionMode !== undefined && !allowed.includes(chat.permissionMode)) {
        problems.push(
          `agents[${i}].chats[${j}].permissionMode: ${chat.permissionMode} is not in allowedModes (${allowed.join(', ')}); add it there to allow it`,
        );
      }
      if (chat.topic !== undefined && chat.listen !== undefined) {
        problems.push(`agents[${i}].chats[${j}].listen: set listen on the chat's own entry (without topic)`);
      }
    });
  });
  const base = path.dirname(file);
  const agents = result.data.agents.map((agent) => resolveAgent(agent, base, environment));
  agents.forEach((agent, i) => {
    const bytes = Buffer.byteLength(agent.socketPath);
    if (bytes > 107) {
      problems.push(
        `agents[${i}].runtimeDir: the socket path ${agent.socketPath} is ${bytes} bytes, over the 107-byte limit; choose a shorter runtimeDir`,
      );
    }
  });
  return { config: { file, agents }, problems };
}

function resolveAgent(raw: RawAgent, base: string, { env }: ConfigEnvironment): AgentConfig {
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
    voice: resolveVoice(raw.voice, base),
    timezone: raw.timezone,
    budget: raw.budget,
    webhooks: resolveWebhooks(raw.webhooks, base),
    schedules: resolveSchedules(raw),
  };
}

/** Formats a zod issue path the way people read it: `agents[0].allow[2]`. */
export function formatPath(parts: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(file)' : out;
}

/** Reads the bot token from its source. Throws `ConfigError` naming the source (never the token). */
export function readToken(
  agent: AgentConfig,
  environment: ConfigEnvironment,
  file: string,
): string | undefined {
  const source = agent.token;
  if (!source) return undefined;
  const check = (value: string | undefined, where: string): string => {
    const token = value?.trim();
    if (!token) throw new ConfigError(file, [`agents(${agent.name}).token: ${where} is empty or missing`]);
    if (!BOT_TOKEN.test(token)) {
      throw new ConfigError(file, [`agents(${agent.name}).token: ${where} does not hold a bot token`]);
    }
    return token;
  };
  switch (source.kind) {
    case 'inline':
      return source.value;
    case 'env':
      return check(environment.env[source.name], `environment variable ${source.name}`);
    case 'file':
    case 'credential': {
      const directory = environment.env.CREDENTIALS_DIRECTORY;
      if (source.kind === 'credential' && !directory) {
        throw new ConfigError(file, [
          `agents(${agent.name}).token: credential ${source.name} needs $CREDENTIALS_DIRECTORY: run the gateway under its systemd unit (LoadCredential=${source.name}:…)`,
        ]);
      }
      const tokenPath = source.kind === 'file' ? source.path : path.join(directory ?? '', source.name);
      let text: string;
      try {
        text = readFileSync(tokenPath, 'utf8');
      } catch (err) {
        throw new ConfigError(file, [
          `agents(${agent.name}).token: cannot read ${tokenPath} (${(err as NodeJS.ErrnoException).code ?? err})`,
        ]);
      }
      return check(text.split('\n')[0], `file ${tokenPath}`);
    }
  }
}

/** The config as it will be used, with secrets masked: for `switchyard config check`. */
export function describeConfig(config: Config): string {
  const masked = config.agents.map((agent) => ({
    ...agent,
    token:
      agent.token === undefined
        ? '(none: local Telegram sandbox)'
        : agent.token.kind === 'inline'
          ? `${agent.token.value.split(':')[0]}:***`
          : agent.token.kind === 'file'
            ? `(from file ${agent.token.path})`
            : agent.token.kind === 'env'
              ? `(from environment variable ${agent.token.name})`
              : `(from systemd credential ${agent.token.name})`,
    claude: {
      ...agent.claude,
      env: Object.fromEntries(
        Object.keys(agent.claude.env).map((k) => [k, maskEnv(k, agent.claude.env[k] ?? '')]),
      ),
    },
    voice: describeVoice(agent.voice),
    webhooks: describeWebhooks(agent.webhooks),
  }));
  return JSON.stringify({ file: config.file, agents: masked }, null, 2);
}

function maskEnv(name: string, value: string): string {
  return /KEY|TOKEN|SECRET|PASSWORD/i.test(name) ? '***' : value;
}
