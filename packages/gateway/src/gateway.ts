/**
 * `createGateway`: the long-lived Telegram side of one agent, as a lifecycle only. `start` takes the
 * state directory's lock, opens the store, builds the services (`compose.ts`) and runs the boot sequence
 * (`io/ops/boot.ts`, where its fixed order is explained); `stop` takes everything down in reverse.
 *
 * Ownership: the lock, the store and the services live from `start` to `stop`; nothing is handed out
 * while stopped (`status` throws then).
 */
import { join } from 'node:path';
import type { RunnerHandle } from '@grammyjs/runner';
import {
  conversationKey,
  lockStateDir,
  prepareExchange,
  type Route,
  type StateLock,
  silentLogger,
} from '@switchyard/protocol';
import { compose, exchangeOf } from './compose.js';
import { webhookOptionsProblem } from './io/automation/webhook-options.js';
import type { SweepReport } from './io/card/pins.js';
import { boot } from './io/ops/boot.js';
import type { Services } from './io/ops/services.js';
import type { GatewayOptions, GatewayStatus } from './options.js';
import { openGatewayStore } from './store/store.js';

/** The gateway's handle. */
export interface Gateway {
  /** Boots (see `io/ops/boot.ts`); resolves once polling has started. */
  start(): Promise<void>;
  /** Stops polling, drains Telegram calls and renders in flight, closes the socket and the store. */
  stop(): Promise<void>;
  /** What `/status` shows: the agent's, or one conversation's (`route`). */
  status(route?: Route): GatewayStatus;
  /** The boot sweep's result, once `start` resolved. */
  readonly sweep: SweepReport | undefined;
}

/** Creates the gateway; nothing happens until `start`. Throws for options that cannot work (what to change). */
export function createGateway(options: GatewayOptions): Gateway {
  const hooksProblem = options.webhooks && webhookOptionsProblem(options.webhooks);
  if (hooksProblem) throw new Error(hooksProblem);
  const logger = (options.logger ?? silentLogger).child({ component: 'gateway', agent: options.agent });
  /** Held from the first thing `start()` does to the last thing `stop()` does. */
  let lock: StateLock | undefined;
  /** The started gateway's services; undefined while stopped. */
  let services: Services | undefined;
  let runner: RunnerHandle | undefined;
  /** Aborted by `stop()`; a fresh one per `start()`. */
  let stopping = new AbortController();
  let sweep: SweepReport | undefined;

  return {
    get sweep() {
      return sweep;
    },
    status(route) {
      if (!services) throw new Error('the gateway is not started: call start() first');
      return services.status(route);
    },

    async start() {
      const taken = lockStateDir(options.stateDir, 'gateway');
      if (!taken.ok) throw new Error(taken.message);
      lock = taken.lock;
      prepareExchange(exchangeOf(options));
      const store = openGatewayStore(join(options.stateDir, 'gateway.sqlite'), options.clock);
      const started = compose(options, store, logger);
      services = started;
      started.alerts.start();
      await started.retention.start();
      options.metrics?.queueLength(() => services?.store.inboxLength() ?? 0);
      options.metrics?.costToday(() => {
        const today = services?.spend.today();
        return {
          agentUsd: today?.agentUsd ?? 0,
          conversations: (today?.conversations ?? []).map((c) => ({
            key: conversationKey(c.route),
            usd: c.usd,
          })),
        };
      });
      stopping = new AbortController();
      const booted = await boot(started, {
        config: options,
        knownChats: [...new Set([...(options.allowChats ?? []), ...options.allowUsers])],
        signal: stopping.signal,
        logger,
      });
      runner = booted.runner;
      sweep = booted.sweep;
      started.files.resume();
      started.injector.start();
      started.schedules.start();
      // Deliveries are taken once the injector and the bridge's endpoint run (after the boot).
      await started.webhooks?.start();
    },

    async stop() {
      // Abort the long poll at once rather than wait out its timeout (up to 30 s); see intake.ts.
      const polled = runner?.stop();
      stopping.abort();
      await polled;
      runner = undefined;
      const s = services;
      if (s) {
        s.alerts.stop();
        s.hostNotice?.stop();
        s.cards.stop();
        s.commands.stop();
        await s.webhooks?.stop();
        s.schedules.stop();
        await s.injector.stop();
        await s.turns.stop();
        await s.files.stop();
        s.transfers.stop();
        await s.courier.drain();
        await s.endpoint.stop();
        await s.retention.stop();
        services = undefined;
        s.store.close();
      }
      lock?.release();
      lock = undefined;
      logger.info({ event: 'stopped' }, 'gateway stopped');
    },
  };
}
