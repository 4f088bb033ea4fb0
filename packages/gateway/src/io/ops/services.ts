/**
 * What a started gateway is made of: the services `compose.ts` builds, `boot.ts` starts in order and
 * `gateway.ts` stops. Types only.
 */
import type { Endpoint, FrameOf, Route, TransferPeer } from '@switchyard/protocol';
import type { Bot } from 'grammy';
import type { createAccess } from '../../core/intake/access.js';
import type { GatewayStatus } from '../../options.js';
import type { GatewayStore } from '../../store/store.js';
import type { InjectorHandle } from '../automation/inject.js';
import type { Schedules } from '../automation/schedules.js';
import type { WebhookServer } from '../automation/webhook-server.js';
import type { HostNotice } from '../bridge/host-notice.js';
import type { CardDriver } from '../card/card-driver.js';
import type { Pins } from '../card/pins.js';
import type { CommandRunner } from '../commands/commands.js';
import type { Prompts } from '../prompts/prompts.js';
import type { FileSender } from '../reply/files.js';
import type { SpendLedger } from '../spend/spend-ledger.js';
import type { BotApi } from '../telegram/bot-api.js';
import type { Courier } from '../telegram/courier.js';
import type { SendJournal } from '../telegram/send-journal.js';
import type { Turns } from '../turns/turns.js';
import type { Alerts } from './alerts.js';
import type { Retention } from './retention.js';

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
  /** Files crossing to and from a bridge on another host; stopped with the services. */
  transfers: Pick<TransferPeer, 'stop'>;
  alerts: Alerts;
  retention: Retention;
  /** The "host unreachable" notice of a bridge on another host; absent for a local bridge. */
  hostNotice: HostNotice | undefined;
  endpoint: Endpoint;
  /** Puts runs of schedules and webhooks in the inbox (`io/automation/inject.ts`). */
  injector: InjectorHandle;
  /** The webhook receiver, when configured (`io/automation/webhook-server.ts`); started after the boot. */
  webhooks: WebhookServer | undefined;
  /** The schedules: the config's and the chats' (`io/automation/schedules.ts`). */
  schedules: Schedules;
  /** The allowlist: whose updates' content intake may keep. */
  allowed: ReturnType<typeof createAccess>;
  /** What turns cost today, and the daily budgets (`io/spend/spend-ledger.ts`). */
  spend: SpendLedger;
  /**
   * A message a previous process left queued, offered again: past today's budget
   * (`io/spend/spend-ledger.ts`), then to the bridge; a refused one is marked unread.
   */
  offer(frame: FrameOf<'user_message'>): void;
  /** Polling's health, from intake. */
  onPollingHealth(health: { ok: boolean; error?: string }): void;
  /** Sends a plain message to a chat through the courier; never rejects. */
  reply(route: Route, text: string): Promise<unknown>;
  /** What `/status` shows: the agent's, or one conversation's (`route`). */
  status(route?: Route): GatewayStatus;
}
