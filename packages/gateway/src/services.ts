/**
 * What a started gateway is made of: the services `compose.ts` builds, `boot.ts` starts in order and
 * `gateway.ts` stops. Types only.
 */
import type { Endpoint, FrameOf, Route } from '@switchyard/protocol';
import type { Bot } from 'grammy';
import type { createAccess } from './access.js';
import type { Alerts } from './alerts.js';
import type { InjectorHandle } from './automation/inject.js';
import type { Schedules } from './automation/schedules.js';
import type { BotApi } from './bot-api.js';
import type { SpendLedger } from './budget/spend-ledger.js';
import type { CardDriver } from './card-driver.js';
import type { CommandRunner } from './commands.js';
import type { Courier } from './courier.js';
import type { FileSender } from './files.js';
import type { GatewayStatus } from './options.js';
import type { Pins } from './pins.js';
import type { Prompts } from './prompts.js';
import type { Retention } from './retention.js';
import type { SendJournal } from './send-journal.js';
import type { GatewayStore } from './store.js';
import type { Turns } from './turns.js';
import type { WebhookServer } from './webhooks/webhook-server.js';

/** The services of a started gateway (built by `compose.ts`). */
export interface Services {
  bot: Bot;
  store: GatewayStore;
  courier: Courier;
  pins: Pins;
  journal: SendJournal;
  /** The bot's API with every `sendMessage` journaled. */
  api: BotApi;
  cards: CardDriver;
  turns: Turns;
  prompts: Prompts;
  commands: CommandRunner;
  files: FileSender;
  alerts: Alerts;
  retention: Retention;
  endpoint: Endpoint;
  /** Puts runs of schedules and webhooks in the inbox (`automation/inject.ts`). */
  injector: InjectorHandle;
  /** The webhook receiver, when configured (`webhooks/webhook-server.ts`); started after the boot. */
  webhooks: WebhookServer | undefined;
  /** The schedules: the config's and the chats' (`automation/schedules.ts`). */
  schedules: Schedules;
  /** The allowlist: whose updates' content intake may keep. */
  allowed: ReturnType<typeof createAccess>;
  /** What turns cost today, and the daily budgets (`budget/spend-ledger.ts`). */
  spend: SpendLedger;
  /** Whether the budgets let `frame` start a turn (else it is marked unread): `budgetGate`. */
  withinBudget(frame: FrameOf<'user_message'>): boolean;
  /** Polling's health, from intake. */
  onPollingHealth(health: { ok: boolean; error?: string }): void;
  /** Sends a plain message to a chat through the courier; never rejects. */
  reply(route: Route, text: string): Promise<unknown>;
  /** What `/status` shows: the agent's, or one conversation's (`route`). */
  status(route?: Route): GatewayStatus;
}
