/**
 * The shape of the config file as zod schemas: every key an agent may set, with the message a mistake in
 * it gets. Only the shape: defaults, absolute paths and the checks across keys are `agent-config.ts` and
 * `config.ts`.
 */
import { PERMISSION_MODES } from '@switchyard/protocol';
import { z } from 'zod';
import { bridgeSchema } from './remote-bridge-config.js';
import { scheduleKeys } from './schedule-config.js';
import { voiceSchema } from './voice-config.js';
import { budgetSchema, webhooksSchema } from './webhook-config.js';

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
  /** The bridge on another host, joined over ssh (`remote-bridge-config.ts`); beside the gateway when absent. */
  bridge: bridgeSchema.optional(),
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
  /**
   * The mode of the sessions webhooks and schedules run in (one per hook and per schedule): `default`
   * unless set here, never a chat's mode; bypassPermissions is refused.
   */
  automationMode: z
    .enum(['default', 'acceptEdits', 'plan'], {
      error:
        "expected default, acceptEdits or plan (bypassPermissions is never given to a webhook's or schedule's session)",
    })
    .optional(),
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

/** The whole file: its agents. */
export const fileSchema = z.strictObject({
  agents: z.array(agentSchema).min(1, { error: 'list at least one agent' }),
});

/** The config file as validated, before defaults and path resolution. */
export type RawConfig = z.infer<typeof fileSchema>;
/** One `agents:` entry as validated. */
export type RawAgent = z.infer<typeof agentSchema>;
