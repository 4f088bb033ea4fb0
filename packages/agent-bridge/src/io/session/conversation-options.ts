/**
 * What one conversation is built from: the agent's settings with its own overrides, the process and
 * delivery settings, the channel, and the callbacks into the pool (`pool.ts`).
 */
import type { Clock, Endpoint, ExchangeOptions, Logger, Route } from '@switchyard/protocol';
import type { WorktreeSpec } from '../../core/process/worktree.js';
import type { PermissionPolicy } from '../../core/prompts/permission-policy.js';
import type { DeliveryStage } from '../delivery/delivery.js';
import type { FilesConfig } from '../mcp/file-tools.js';
import type { FileChannelStore } from '../outbox/outbox.js';

/** What a conversation's process is started with: the agent's settings with this conversation's overrides. */
export interface ConversationSettings {
  workDir: string;
  model?: string | undefined;
  permissionMode?: string | undefined;
  /** Shown in `/sessions` until the user renames it. */
  name?: string | undefined;
  /** Ask before the file tools send (`confirmsFileSends` says the default). */
  confirmFileSends?: boolean | undefined;
  /** The operator's limits on modes and "always allow" (default: `DEFAULT_PERMISSION_POLICY`). */
  permissions?: PermissionPolicy | undefined;
  /** Its own git worktree (`worktree: true`); `workDir` is then the worktree's path. */
  worktree?: WorktreeSpec | undefined;
  /** A turn the login's usage limit refuses waits for the reset (default) or fails (false). */
  waitOutUsageLimit?: boolean | undefined;
  /**
   * The settings files the CLI reads (`--setting-sources`); all of them when unset. A webhook's or
   * schedule's own conversation reads `user,project`: not the working directory's `settings.local.json`,
   * where the "always allow" rules people press in chats land under `alwaysAllowScope: project`.
   */
  settingSources?: string | undefined;
}

/** A conversation's config overrides: its settings, and `worktree: true` for a worktree of its own. */
export type ConversationOverrides = Partial<Omit<ConversationSettings, 'worktree'>> & {
  worktree?: boolean | undefined;
};

/** Options of {@link Conversation}. */
export interface ConversationOptions {
  /** The conversation's key (`conversationKey(route)`, or `shared`). */
  key: string;
  /** The conversation's route; absent for the one session of a `shared` agent. */
  route?: Route | undefined;
  /** Its state directory (created 0700). */
  dir: string;
  settings: ConversationSettings;
  claudeBin: string;
  claudeArgs?: readonly string[] | undefined;
  env: NodeJS.ProcessEnv;
  mcpConfig?: string | undefined;
  /** The file tools' settings (an MCP server of Switchyard's own, per process). */
  files?: FilesConfig | undefined;
  /** Where the files the agent sends are copied for the gateway (the bridge's `exchange`). */
  exchange: ExchangeOptions;
  restartOnExit: boolean;
  stuckAfterMs: number;
  crashLoop: { maxExits: number; windowMs: number };
  stopGraceMs: number;
  maxLineBytes: number;
  log: Logger;
  /** Time for the process's timers and the conversation's timestamps (the bridge's clock). */
  clock: Clock;
  /** The channel and its durable store, shared by every conversation of the agent. */
  endpoint: Pick<Endpoint, 'send'>;
  store: FileChannelStore;
  /** Asked before a process is started by a restart after an exit: false while every slot is taken. */
  mayStart(): boolean;
  /** Something happened that may free a process slot (a turn ended, a process exited). */
  onSettled(): void;
  /** Reading its output threw outside any call of the bridge's (a file event): the conversation failed. */
  onFailure(err: unknown): void;
  onDeliveryStage?: ((stage: DeliveryStage, key: string) => void) | undefined;
}
