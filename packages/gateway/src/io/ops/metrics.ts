/**
 * The gateway's Prometheus metrics: turns (started, ended by outcome, duration, time to the first
 * streamed text), the inbound queue, the bridge connection and its reconnects, Telegram calls by method
 * and outcome, 429s by method, edits, the cost the CLI reports, today's cost of the agent and of each
 * conversation (labelled by its key, `chat` or `chat:topic`), messages the daily budgets refused, and
 * webhook requests by hook and result. Off unless the operator configures a port; served over plain
 * HTTP at `/metrics`, on 127.0.0.1 by default, since chat ids and costs are nobody else's business.
 *
 * The rest of the gateway sees only {@link GatewayMetrics}: a few calls at the points where the facts
 * are (the Bot API transformer, the bridge's endpoint for its frames and its connection).
 * {@link noMetrics} is what it gets when metrics are off. Each handle has its own registry, so two
 * gateways in one process (tests) never share counters.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AppFrame, type Clock, systemClock } from '@switchyard/protocol';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** What the gateway reports; every method is cheap and never throws. */
export interface GatewayMetrics {
  /** One Bot API call's result as Telegram gave it (before retries: each 429 counts). */
  telegramCall(method: string, result: { ok: boolean; error_code?: number }): void;
  /**
   * Sees every frame from the bridge as it arrives, beside the frame's way to its owner (the endpoint
   * tells it, `io/bridge/endpoint.ts`): the turns' starts, first texts and ends are timed here.
   */
  frame(frame: AppFrame): void;
  bridgeConnected(connected: boolean): void;
  /** Where the inbound queue's length is read at scrape time. */
  queueLength(read: () => number): void;
  /** Where today's cost is read at scrape time: the agent's, and each conversation's by its key. */
  costToday(read: () => { agentUsd: number; conversations: { key: string; usd: number }[] }): void;
  /** A message the daily budget `scope` (the agent's, or its sender's) kept from starting a turn. */
  budgetRefused(scope: 'agent' | 'user'): void;
  /** One webhook request's result (`io/automation/webhook-server.ts`), by hook (`unknown` for none). */
  webhookResult(hook: string, result: string): void;
}

/** Metrics off: every call does nothing. */
export const noMetrics: GatewayMetrics = {
  telegramCall: () => {},
  frame: () => {},
  bridgeConnected: () => {},
  queueLength: () => {},
  costToday: () => {},
  budgetRefused: () => {},
  webhookResult: () => {},
};

/** Where the endpoint listens. */
export interface MetricsOptions {
  /** 0 picks a free port (tests). */
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Stamped on every series. */
  agent: string;
  /** Time for the turns' latencies; default the system clock. */
  clock?: Clock;
}

/** The metrics and their HTTP endpoint. */
export interface MetricsServer extends GatewayMetrics {
  /** Listens; resolves with the URL of `/metrics`. */
  start(): Promise<string>;
  /** Closes the endpoint; resolves when the port is released. Idempotent. */
  stop(): Promise<void>;
  /** The exposition text, as a scrape returns it. */
  render(): Promise<string>;
}

/** How many ended turn ids are remembered, so a `turn_ended` resent after a reconnect counts once. */
const ENDED_KEPT = 1000;

/** Creates the metrics; nothing listens until `start()`. */
export function createMetrics(options: MetricsOptions): MetricsServer {
  const clock = options.clock ?? systemClock;
  const now = (): number => clock.now();
  const registry = new Registry();
  registry.setDefaultLabels({ agent: options.agent });
  collectDefaultMetrics({ register: registry, prefix: 'switchyard_gateway_' });
  const counter = (name: string, help: string, labelNames: string[] = []) =>
    new Counter({ name, help, labelNames, registers: [registry] });
  const turnsStarted = counter('switchyard_turns_started_total', 'Turns the bridge started.');
  const turnsEnded = counter('switchyard_turns_total', 'Turns ended, by outcome.', ['outcome']);
  const turnSeconds = new Histogram({
    name: 'switchyard_turn_duration_seconds',
    help: 'From turn_started to turn_ended.',
    buckets: [1, 2, 5, 10, 30, 60, 120, 300, 600, 1800],
    registers: [registry],
  });
  const firstTokenSeconds = new Histogram({
    name: 'switchyard_first_token_seconds',
    help: 'From turn_started to the first streamed text of the turn.',
    buckets: [0.25, 0.5, 1, 2, 3, 5, 10, 20, 60],
    registers: [registry],
  });
  const cost = counter('switchyard_cost_usd_total', 'Cost the Claude CLI reported for ended turns, in USD.');
  const reconnects = counter('switchyard_bridge_reconnects_total', 'Bridge connections after the first.');
  const connectedGauge = new Gauge({
    name: 'switchyard_bridge_connected',
    help: '1 while the bridge is connected.',
    registers: [registry],
  });
  const calls = counter('switchyard_telegram_calls_total', 'Bot API calls, by method and result.', [
    'method',
    'result',
  ]);
  const tooMany = counter('switchyard_telegram_429_total', 'Bot API 429 answers, by method.', ['method']);
  const edits = counter('switchyard_telegram_edits_total', 'Message edits sent (editMessageText).');
  let readQueue: () => number = () => 0;
  new Gauge({
    name: 'switchyard_inbound_queue_length',
    help: 'Inbound messages not yet acknowledged by the bridge.',
    registers: [registry],
    collect() {
      this.set(readQueue());
    },
  });

  let readCost: () => { agentUsd: number; conversations: { key: string; usd: number }[] } = () => ({
    agentUsd: 0,
    conversations: [],
  });
  new Gauge({
    name: 'switchyard_cost_today_usd',
    help: 'What the agent’s turns that ended today (in its time zone) cost, in USD.',
    registers: [registry],
    collect() {
      this.set(readCost().agentUsd);
    },
  });
  new Gauge({
    name: 'switchyard_conversation_cost_today_usd',
    help: 'What each conversation’s turns that ended today cost, in USD, by conversation key.',
    labelNames: ['conversation'],
    registers: [registry],
    collect() {
      this.reset();
      for (const c of readCost().conversations) this.set({ conversation: c.key }, c.usd);
    },
  });
  const budgetRefusals = counter(
    'switchyard_budget_refusals_total',
    'Messages a daily budget kept from starting a turn, by budget (agent or user).',
    ['scope'],
  );
  const webhookRequests = counter(
    'switchyard_webhook_requests_total',
    'Webhook requests, by hook and result.',
    ['hook', 'result'],
  );

  /** Turn id → when its turn_started was seen, and whether its first text has been. */
  const open = new Map<string, { startedAt: number; firstText: boolean }>();
  const ended = new Set<string>();
  let connections = 0;

  const observe = (frame: AppFrame): void => {
    switch (frame.type) {
      case 'turn_started':
        if (open.has(frame.turnId) || ended.has(frame.turnId)) return;
        open.set(frame.turnId, { startedAt: now(), firstText: false });
        turnsStarted.inc();
        return;
      case 'text_delta':
      case 'text': {
        const turn = open.get(frame.turnId);
        if (turn && !turn.firstText) {
          turn.firstText = true;
          firstTokenSeconds.observe((now() - turn.startedAt) / 1000);
        }
        return;
      }
      case 'turn_ended': {
        if (ended.has(frame.turnId)) return;
        ended.add(frame.turnId);
        if (ended.size > ENDED_KEPT) ended.delete(ended.values().next().value as string);
        const turn = open.get(frame.turnId);
        open.delete(frame.turnId);
        turnsEnded.inc({ outcome: frame.outcome });
        const ms = frame.durationMs ?? (turn ? now() - turn.startedAt : undefined);
        if (ms !== undefined) turnSeconds.observe(ms / 1000);
        if (frame.costUsd !== undefined) cost.inc(frame.costUsd);
        return;
      }
      default:
        return;
    }
  };

  let server: Server | undefined;
  let stopping: Promise<void> | undefined;
  return {
    telegramCall(method, result) {
      calls.inc({ method, result: result.ok ? 'ok' : String(result.error_code ?? 'error') });
      if (result.error_code === 429) tooMany.inc({ method });
      if (result.ok && method === 'editMessageText') edits.inc();
    },
    frame: observe,
    bridgeConnected(connected) {
      connectedGauge.set(connected ? 1 : 0);
      if (connected && ++connections > 1) reconnects.inc();
    },
    queueLength(read) {
      readQueue = read;
    },
    costToday(read) {
      readCost = read;
    },
    budgetRefused(scope) {
      budgetRefusals.inc({ scope });
    },
    webhookResult(hook, result) {
      webhookRequests.inc({ hook, result });
    },
    render: () => registry.metrics(),
    async start() {
      const s = createServer((req, res) => {
        if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
          res.writeHead(404).end();
          return;
        }
        registry.metrics().then(
          (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
          () => res.writeHead(500).end(),
        );
      });
      server = s;
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(options.port, options.host ?? '127.0.0.1', () => {
          s.off('error', reject);
          resolve();
        });
      });
      const { address, port } = s.address() as AddressInfo;
      return `http://${address.includes(':') ? `[${address}]` : address}:${port}/metrics`;
    },
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        if (!server) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopping;
    },
  };
}
