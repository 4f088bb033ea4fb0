/**
 * The webhook receiver: a plain `node:http` server whose only route is `POST /hooks/<name>`. A thin
 * shell over the rules of `core/automation/webhook-intake.ts` (whose module comment gives the order of the
 * checks and the answers): it reads the body up to the hook's limit, computes the signature
 * (`signature.ts`), saves the payload as a file in the exchange directory, hands the run to the
 * injector, and answers.
 *
 * Crash safety: the answer 202 is sent only after `inject` returned, and `inject` is durable before it
 * returns (an inbound entry in SQLite, delivered exactly once by the turn machine), so a gateway killed
 * after the 202 delivers the run at its next start; one killed before it leaves the sender without a
 * 2xx, and GitHub (or any sender that retries) delivers again under the same id, which the injector
 * takes once. The payload file is written before `inject` and removed again when the run was a
 * duplicate or could not be injected; a file a crash orphaned is deleted by the exchange's retention.
 *
 * Ownership: the per-hook rate buckets and the per-address refusal limit (`core/automation/refusal-limit.ts`)
 * live here, for the server's life.
 *
 * Listener limits ({@link ListenerLimits}): at most `maxConnections` open at once (more are closed as
 * they come), headers within `headersTimeoutMs` and a whole request within `requestTimeoutMs` (Node's
 * own timers, answered 408), and an address refused for bad signatures too often is answered 429 before
 * its body is read.
 */
import { randomBytes } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type Clock,
  describeError,
  type ExchangeOptions,
  type Logger,
  systemClock,
  writeExchangeFile,
} from '@switchyard/protocol';
import { createRefusalLimit } from '../../core/automation/refusal-limit.js';
import {
  type DeliveryVerdict,
  deliveredStatus,
  type HookRule,
  judgeDelivery,
  routeHookRequest,
  signatureHeader,
  signedTimestamp,
} from '../../core/automation/webhook-intake.js';
import {
  genericRunText,
  githubRunText,
  githubSummary,
  line,
  webhookNote,
} from '../../core/automation/webhook-summary.js';
import { type BucketState, bucketTake, fullBucket } from '../../core/telegram/token-bucket.js';
import type { AutomationRun, Injector } from './inject.js';
import { bodySha256, checkSignature, signedContent } from './signature.js';
import {
  DEFAULT_LISTENER_LIMITS,
  DEFAULT_WEBHOOK_BODY_BYTES,
  DEFAULT_WEBHOOK_RATE,
  type ListenerLimits,
  type WebhookHookOptions,
  type WebhookOptions,
} from './webhook-options.js';

/** How a request ended, as the metrics count it: an accepted or duplicate delivery, or why not. */
export type WebhookResult =
  | 'accepted'
  | 'duplicate'
  | 'ping'
  | 'filtered'
  | 'unknown_hook'
  | 'method_not_allowed'
  | 'too_large'
  | 'signature_missing'
  | 'signature_malformed'
  | 'signature_mismatch'
  | 'timestamp_missing'
  | 'timestamp_malformed'
  | 'timestamp_stale'
  | 'address_blocked'
  | 'event_missing'
  | 'delivery_id_missing'
  | 'delivery_id_malformed'
  | 'rate_limited'
  | 'failed';

/** What the receiver needs besides its config. */
export interface WebhookServerOptions extends WebhookOptions {
  /** Makes a delivery a durable inbound run (`inject.ts`). */
  injector: Injector;
  /** Where payload files are saved for the agent (the gateway's exchange directory). */
  exchange: ExchangeOptions;
  /** Counts every request's result, by hook (`unknown` for a request to no hook). */
  onResult?(hook: string, result: WebhookResult): void;
  /** Time for the rate buckets and the files' names; default the system clock. */
  clock?: Clock;
  logger: Logger;
}

/** The receiver's handle. */
export interface WebhookServer {
  /** Listens; resolves with the base URL (`http://host:port`). */
  start(): Promise<string>;
  /** Stops listening and closes every connection; resolves once the port is released. Idempotent. */
  stop(): Promise<void>;
}

/** Creates the receiver; nothing listens until `start`. */
export function createWebhookServer(options: WebhookServerOptions): WebhookServer {
  const clock = options.clock ?? systemClock;
  const { logger } = options;
  const hooks = new Map<string, { rule: HookRule; config: WebhookHookOptions }>();
  for (const config of options.hooks) {
    const rule: HookRule = {
      name: config.name,
      kind: config.kind,
      route: config.route,
      events: config.events,
      limits: config.rate ?? DEFAULT_WEBHOOK_RATE,
    };
    hooks.set(config.name, { rule, config });
  }
  const rules = new Map([...hooks].map(([name, h]) => [name, h.rule]));
  const buckets = new Map<string, BucketState>(
    [...hooks.values()].map((h) => [h.rule.name, fullBucket(h.rule.limits, clock.now())]),
  );
  const result = (hook: string, r: WebhookResult) => options.onResult?.(hook, r);
  const limits: ListenerLimits = { ...DEFAULT_LISTENER_LIMITS, ...options.limits };
  const refusals = createRefusalLimit(limits.refusals);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const address = addressOf(req, limits.forwardedFor);
    const allowed = refusals.check(address, clock.now());
    if (!allowed.ok) {
      result('unknown', 'address_blocked');
      answer(res, 429, 'address_blocked', {
        'retry-after': String(allowed.retryAfterSec),
        connection: 'close',
      });
      res.once('finish', () => req.destroy());
      return;
    }
    const routed = routeHookRequest(req.method, req.url, rules);
    if (!routed.ok) {
      result('unknown', routed.reason);
      answer(res, routed.status, routed.reason, routed.status === 405 ? { allow: 'POST' } : {});
      req.resume();
      return;
    }
    const hook = hooks.get(routed.hook.name);
    if (!hook) return;
    const { rule, config } = hook;
    const body = await readBody(req, config.maxBodyBytes ?? DEFAULT_WEBHOOK_BODY_BYTES);
    if (!body.ok) {
      result(rule.name, 'too_large');
      // Stop reading: answer, and close the connection rather than take the rest of the body.
      answer(res, 413, 'too_large', { connection: 'close' });
      res.once('finish', () => req.destroy());
      return;
    }
    const headerValue = req.headers[signatureHeader(rule.kind)];
    const timestamp = signedTimestamp(rule.kind, req.headers);
    const signed = signedContent(body.data, typeof timestamp === 'number' ? timestamp : undefined);
    const verdict = judgeDelivery({
      hook: rule,
      headers: req.headers,
      signature: checkSignature(
        Array.isArray(headerValue) ? headerValue[0] : headerValue,
        config.secret,
        signed,
      ),
      timestamp,
      bodySha256: bodySha256(signed),
      bucket: buckets.get(rule.name) ?? fullBucket(rule.limits, clock.now()),
      now: clock.now(),
    });
    if (verdict.kind !== 'deliver') {
      result(rule.name, verdict.reason);
      if (verdict.status === 401 && refusals.refused(address, clock.now()))
        logger.warn({ event: 'webhook_address_blocked', hook: rule.name, address }, 'refused too often');
      logger.info({
        event: 'webhook_refused',
        hook: rule.name,
        status: verdict.status,
        reason: verdict.reason,
      });
      answer(
        res,
        verdict.status,
        verdict.reason,
        verdict.status === 429 ? { 'retry-after': String(verdict.retryAfterSec) } : {},
      );
      return;
    }
    let path: string | undefined;
    try {
      const run = await makeRun(rule, verdict, body.data, req.headers['content-type']);
      path = run.attachments?.[0]?.path;
      const outcome = options.injector.inject(run);
      if (outcome === 'accepted') {
        const taken = bucketTake(
          buckets.get(rule.name) ?? fullBucket(rule.limits, clock.now()),
          rule.limits,
          clock.now(),
        );
        if (taken) buckets.set(rule.name, taken);
      } else if (path) {
        await unlink(path).catch(() => {});
      }
      result(rule.name, outcome);
      logger.info({ event: 'webhook_delivery', hook: rule.name, delivery: verdict.deliveryId, outcome });
      answer(res, deliveredStatus(outcome), outcome);
    } catch (error) {
      if (path) await unlink(path).catch(() => {});
      result(rule.name, 'failed');
      logger.error({ event: 'webhook_failed', hook: rule.name, error: describeError(error) });
      answer(res, 500, 'failed');
    }
  };

  /** The run a delivery becomes, its body saved as a file beside it. */
  const makeRun = async (
    rule: HookRule,
    verdict: DeliveryVerdict & { kind: 'deliver' },
    body: Buffer,
    contentType: string | undefined,
  ): Promise<AutomationRun> => {
    const payload = payloadOf(body, contentType);
    const json = payload !== undefined;
    const data = json ? Buffer.from(JSON.stringify(payload, null, 2)) : body;
    const stem = `${verdict.event ?? rule.name}-${verdict.deliveryId}`.replace(/[^A-Za-z0-9._-]/g, '_');
    const path = await writeExchangeFile(
      options.exchange,
      `webhook-${clock.now()}-${randomBytes(6).toString('hex')}${json ? '.json' : '.txt'}`,
      data,
    );
    const summary =
      rule.kind === 'github' && verdict.event !== undefined
        ? githubSummary(verdict.event, payload)
        : line(body.subarray(0, 400).toString('utf8'));
    return {
      key: verdict.key,
      contentSha256: verdict.contentSha256,
      route: rule.route,
      origin: { kind: 'webhook', name: rule.name },
      note: webhookNote(rule.name, summary),
      text:
        rule.kind === 'github' && verdict.event !== undefined
          ? githubRunText(rule.name, verdict.event, verdict.deliveryId, payload)
          : genericRunText(rule.name, verdict.deliveryId, summary),
      attachments: [
        {
          kind: 'document',
          path,
          name: `${stem.slice(0, 200)}${json ? '.json' : '.txt'}`,
          mime: json ? 'application/json' : 'text/plain',
          size: data.length,
        },
      ],
    };
  };

  let server: Server | undefined;
  let stopping: Promise<void> | undefined;
  return {
    async start() {
      const s = createServer(
        {
          headersTimeout: limits.headersTimeoutMs,
          requestTimeout: limits.requestTimeoutMs,
          // Node looks at the two timeouts only this often (default 30 s): a tenth of the shorter one.
          connectionsCheckingInterval: Math.max(
            100,
            Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 10,
          ),
        },
        (req, res) => {
          handle(req, res).catch((error: unknown) => {
            logger.error({ event: 'webhook_failed', error: describeError(error) });
            if (!res.headersSent) answer(res, 500, 'failed');
          });
        },
      );
      s.maxConnections = limits.maxConnections;
      server = s;
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(options.listen.port, options.listen.host, () => {
          s.off('error', reject);
          resolve();
        });
      });
      const { address, port } = s.address() as AddressInfo;
      const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
      logger.info({ event: 'webhooks_listening', url, hooks: [...hooks.keys()] }, 'webhooks listening');
      return url;
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

/**
 * Whose request it is: the connection's address, or with `forwardedFor` the last `X-Forwarded-For` entry
 * (the one the proxy in front wrote; earlier ones are the client's to invent).
 */
function addressOf(req: IncomingMessage, forwardedFor: boolean): string {
  const forwarded = forwardedFor ? req.headers['x-forwarded-for'] : undefined;
  const last = (Array.isArray(forwarded) ? forwarded.at(-1) : forwarded)?.split(',').at(-1)?.trim();
  return last || req.socket.remoteAddress || 'unknown';
}

/**
 * Reads the body whole, or stops at the first byte past `limit` (a declared length over it stops at once).
 */
function readBody(req: IncomingMessage, limit: number): Promise<{ ok: true; data: Buffer } | { ok: false }> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ ok: false });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        resolve({ ok: false });
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve({ ok: true, data: Buffer.concat(chunks) }));
    req.once('error', reject);
  });
}

/**
 * The parsed payload: a JSON body, or GitHub's form encoding (`payload=<json>`); `undefined` when the
 * body is not JSON (it is saved as text then).
 */
function payloadOf(body: Buffer, contentType: string | undefined): unknown {
  try {
    const text = body.toString('utf8');
    if (contentType?.startsWith('application/x-www-form-urlencoded')) {
      const form = new URLSearchParams(text).get('payload');
      return form === null ? undefined : JSON.parse(form);
    }
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function answer(
  res: ServerResponse,
  status: number,
  reason: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ status, result: reason }));
}
