/**
 * The webhook receiver's options, as the cli maps the config's `webhooks:` block onto them (secrets
 * already read from their sources). Types only, so `options.ts` may import it without a cycle.
 */
import type { Route } from '@switchyard/protocol';
import { DEFAULT_REFUSAL_LIMITS, type RefusalLimits } from '../../core/automation/refusal-limit.js';
import type { HookKind } from '../../core/automation/webhook-intake.js';

/** The largest body a hook takes unless it says otherwise: 1 MiB. */
export const DEFAULT_WEBHOOK_BODY_BYTES = 1024 * 1024;
/** A hook's rate unless it says otherwise: a burst of 10, then 30 deliveries a minute. */
export const DEFAULT_WEBHOOK_RATE = { perMinute: 30, burst: 10 } as const;

/** One hook. */
export interface WebhookHookOptions {
  /** Served as `POST /hooks/<name>`. */
  name: string;
  /**
   * `github`: X-Hub-Signature-256, X-GitHub-Event, X-GitHub-Delivery. `generic`: X-Signature-256 over
   * `<timestamp>.<body>` with the timestamp (Unix seconds, within 5 minutes) in X-Signature-Timestamp.
   */
  kind: HookKind;
  /** The HMAC-SHA256 key both sides share. Never logged. */
  secret: string;
  /** The conversation its deliveries reach. */
  route: Route;
  /**
   * GitHub events delivered: required for kind `github` ({@link webhookOptionsProblem}), since each one
   * lets a stranger's text reach the agent. Not used by generic hooks.
   */
  events?: readonly string[];
  /** Bodies over this many bytes are refused with 413; default {@link DEFAULT_WEBHOOK_BODY_BYTES}. */
  maxBodyBytes?: number;
  /** Deliveries accepted a minute, and in a burst; default {@link DEFAULT_WEBHOOK_RATE}. */
  rate?: { perMinute: number; burst: number };
}

/** The receiver: where it listens and its hooks. */
export interface WebhookOptions {
  /**
   * Where the HTTP server listens; put a TLS proxy in front. The cli refuses a host beyond loopback
   * unless the config says so explicitly. Port 0 picks a free one (tests).
   */
  listen: { host: string; port: number };
  hooks: readonly WebhookHookOptions[];
  /** The listener's own limits; each has a default ({@link DEFAULT_LISTENER_LIMITS}). */
  limits?: Partial<ListenerLimits>;
}

/**
 * What is wrong with the receiver's options, in words that say what to write; `undefined` when nothing
 * is. A GitHub hook must list its events: none is delivered by default.
 */
export function webhookOptionsProblem(options: WebhookOptions): string | undefined {
  for (const hook of options.hooks) {
    if (hook.kind === 'github' && (hook.events === undefined || hook.events.length === 0))
      return (
        `webhook "${hook.name}": list the GitHub events it delivers, e.g. events: [workflow_run, pull_request] ` +
        '(no event is delivered by default: each one lets text from outside reach the agent)'
      );
  }
  return undefined;
}
/** What one listener takes at once and how long it waits, and how bad signatures from one address end. */
export interface ListenerLimits {
  /** Connections open at once; more are closed as they come. */
  maxConnections: number;
  /** How long a request's headers may take to arrive (a slow sender holds a connection no longer). */
  headersTimeoutMs: number;
  /** How long a whole request (headers and body) may take. */
  requestTimeoutMs: number;
  /**
   * Refusals for a bad signature or timestamp from one address that block it (`refusals.strikes` within
   * `refusals.windowMs`), and for how long (`refusals.blockMs`): 429 before its body is read.
   */
  refusals: RefusalLimits;
  /**
   * Whose address a request is: the connection's (default), or — behind a proxy that sets it — the last
   * entry of `X-Forwarded-For`. Without it, behind a proxy every request is the proxy's.
   */
  forwardedFor: boolean;
}

/** The listener's defaults: 64 connections, 10 s for the headers, 30 s for a request. */
export const DEFAULT_LISTENER_LIMITS: ListenerLimits = {
  maxConnections: 64,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  refusals: DEFAULT_REFUSAL_LIMITS,
  forwardedFor: false,
};
