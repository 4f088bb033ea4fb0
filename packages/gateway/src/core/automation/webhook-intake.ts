/**
 * The rules of a webhook request, from its first line to the answer, as pure decisions; the HTTP shell
 * (`io/automation/webhook-server.ts`) reads the body, computes the HMAC and performs what these return.
 *
 * The order is fixed and each step answers before the next is looked at:
 * 1. the path and method ({@link routeHookRequest}): `POST /hooks/<name>` of a configured hook, else 404
 *    (unknown hook or path) or 405 (another method);
 * 0. the sender's address (the shell, `core/automation/refusal-limit.ts`): one that was refused too often
 *    lately → 429 with `Retry-After`, before anything else is read;
 * 2. the body's size (the shell, against the hook's limit): 413, reading stopped;
 * 3. the signature ({@link judgeDelivery}): missing, malformed or not matching → 401, nothing else done.
 *    A generic hook signs `<timestamp>.<body>` with the timestamp (Unix seconds) in
 *    `X-Signature-Timestamp` ({@link TIMESTAMP_HEADER}): one missing or malformed is refused before the
 *    HMAC, one more than {@link TIMESTAMP_TOLERANCE_MS} off the clock (stale or from the future) after;
 * 4. what the delivery is: GitHub's `ping` and events the hook does not list (a hook that lists none
 *    takes none) → 200, not delivered; a GitHub delivery without its event or id header → 400;
 * 5. the hook's rate ({@link judgeDelivery}, with the hook's bucket): over it → 429 with `Retry-After`,
 *    nothing delivered;
 * 6. the delivery is handed to the injector under its key `webhook:<hook>:<deliveryId>` and the SHA-256 of
 *    what was signed ({@link deliveredStatus}): 202 when accepted (durable before the answer), 200 for a
 *    key or a signed content seen before — a captured delivery replayed under a new id is not delivered
 *    again.
 *
 * Contract: a refused request (401, 404, 405, 413, 429, 400) and an ignored one (ping, filtered) deliver
 * nothing and take no rate token; the token is taken only for an accepted delivery.
 */
import type { Route } from '@switchyard/protocol/common';
import { type BucketLimits, type BucketState, bucketCheck } from '../telegram/token-bucket.js';

/** How a hook's requests are signed and described. */
export type HookKind = 'github' | 'generic';

/** One configured hook, as the rules need it (its secret stays with the shell). */
export interface HookRule {
  /** The path's last part: `POST /hooks/<name>`. */
  name: string;
  kind: HookKind;
  /** The conversation its deliveries reach. */
  route: Route;
  /**
   * GitHub events delivered; undefined: none (the options refuse a GitHub hook without them, see
   * `webhookOptionsProblem`). Ignored for generic hooks.
   */
  events?: readonly string[] | undefined;
  /** The hook's rate. */
  limits: BucketLimits;
}

/** The path prefix every hook is served under. */
export const HOOKS_PATH = '/hooks/';

/** What the first line of a request leads to: one hook, or an answer. */
export type HookRoute =
  | { ok: true; hook: HookRule }
  | { ok: false; status: 404; reason: 'unknown_hook' }
  | { ok: false; status: 405; reason: 'method_not_allowed' };

/** The hook a request is for (see the module comment, step 1). */
export function routeHookRequest(
  method: string | undefined,
  url: string | undefined,
  hooks: ReadonlyMap<string, HookRule>,
): HookRoute {
  const path = (url ?? '').split('?')[0] ?? '';
  const name = path.startsWith(HOOKS_PATH) ? decodeName(path.slice(HOOKS_PATH.length)) : undefined;
  const hook = name === undefined ? undefined : hooks.get(name);
  if (!hook) return { ok: false, status: 404, reason: 'unknown_hook' };
  if (method !== 'POST') return { ok: false, status: 405, reason: 'method_not_allowed' };
  return { ok: true, hook };
}

function decodeName(part: string): string | undefined {
  try {
    const name = decodeURIComponent(part);
    return name.length > 0 && !name.includes('/') ? name : undefined;
  } catch {
    return undefined;
  }
}

/** The header a generic hook's signed timestamp comes in (Unix seconds), lower-case. */
export const TIMESTAMP_HEADER = 'x-signature-timestamp';
/** How far a generic delivery's signed timestamp may be from the receiver's clock, either way: 5 minutes. */
export const TIMESTAMP_TOLERANCE_MS = 5 * 60_000;

/**
 * A generic delivery's signed timestamp (Unix seconds, digits only), `missing` or `malformed`; `undefined`
 * for a GitHub hook (GitHub signs no time: its deliveries are told apart by id and content).
 */
export function signedTimestamp(
  kind: HookKind,
  headers: DeliveryInput['headers'],
): number | 'missing' | 'malformed' | undefined {
  if (kind !== 'generic') return undefined;
  const value = header(headers, TIMESTAMP_HEADER);
  if (value === undefined) return 'missing';
  return /^\d{1,12}$/.test(value) ? Number(value) : 'malformed';
}

/** The header a hook's signature comes in, lower-case as Node gives headers. */
export function signatureHeader(kind: HookKind): string {
  return kind === 'github' ? 'x-hub-signature-256' : 'x-signature-256';
}

/** A signature header's digest: `sha256=<64 hex digits>`, lower-cased; or what is wrong with it. */
export function signatureDigest(
  header: string | undefined,
): { ok: true; hex: string } | { ok: false; problem: 'missing' | 'malformed' } {
  if (header === undefined || header.trim() === '') return { ok: false, problem: 'missing' };
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!match?.[1]) return { ok: false, problem: 'malformed' };
  return { ok: true, hex: match[1].toLowerCase() };
}

/** What the shell found of the signature: its header's problem, or whether the HMAC matched. */
export type SignatureCheck = 'missing' | 'malformed' | 'mismatch' | 'valid';

/** What a request with a body comes to (see the module comment, steps 3–5). */
export type DeliveryVerdict =
  | {
      kind: 'refuse';
      status: 401;
      reason:
        | 'signature_missing'
        | 'signature_malformed'
        | 'signature_mismatch'
        | 'timestamp_missing'
        | 'timestamp_malformed'
        | 'timestamp_stale';
    }
  | { kind: 'refuse'; status: 400; reason: 'event_missing' | 'delivery_id_missing' | 'delivery_id_malformed' }
  | { kind: 'refuse'; status: 429; reason: 'rate_limited'; retryAfterSec: number }
  | { kind: 'ignore'; status: 200; reason: 'ping' | 'filtered' }
  | {
      kind: 'deliver';
      /** The injector's key: `webhook:<hook>:<deliveryId>`. */
      key: string;
      deliveryId: string;
      /** The GitHub event; undefined for a generic hook. */
      event: string | undefined;
      /** SHA-256 of what was signed (hex): a second key, so a replay under a new id is a duplicate. */
      contentSha256: string;
    };

/** What {@link judgeDelivery} looks at. */
export interface DeliveryInput {
  hook: HookRule;
  /** The request's headers, lower-case names (Node's `IncomingHttpHeaders`). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  signature: SignatureCheck;
  /** A generic delivery's signed timestamp ({@link signedTimestamp}); undefined for GitHub. */
  timestamp?: number | 'missing' | 'malformed' | undefined;
  /**
   * SHA-256 of what was signed, hex — the body (GitHub), `<timestamp>.<body>` (generic): a generic
   * delivery's id when it names none, and the delivery's second key.
   */
  bodySha256: string;
  /** The hook's bucket as it is now. */
  bucket: BucketState;
  now: number;
}

/** A delivery id a header may carry: what GitHub sends (a GUID) and what a sender reasonably would. */
const DELIVERY_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Judges a request whose body was read whole (see the module comment). */
export function judgeDelivery(input: DeliveryInput): DeliveryVerdict {
  const { hook, headers } = input;
  const stamp = input.timestamp;
  if (stamp === 'missing' || stamp === 'malformed') {
    return { kind: 'refuse', status: 401, reason: `timestamp_${stamp}` };
  }
  if (input.signature !== 'valid') {
    return { kind: 'refuse', status: 401, reason: `signature_${input.signature}` };
  }
  if (stamp !== undefined && Math.abs(input.now - stamp * 1000) > TIMESTAMP_TOLERANCE_MS) {
    return { kind: 'refuse', status: 401, reason: 'timestamp_stale' };
  }
  let event: string | undefined;
  let deliveryId: string | undefined;
  if (hook.kind === 'github') {
    event = header(headers, 'x-github-event');
    if (!event) return { kind: 'refuse', status: 400, reason: 'event_missing' };
    if (event === 'ping') return { kind: 'ignore', status: 200, reason: 'ping' };
    if (hook.events === undefined || !hook.events.includes(event)) {
      return { kind: 'ignore', status: 200, reason: 'filtered' };
    }
    deliveryId = header(headers, 'x-github-delivery');
    if (!deliveryId) return { kind: 'refuse', status: 400, reason: 'delivery_id_missing' };
  } else {
    deliveryId = header(headers, 'x-delivery-id') ?? `sha256-${input.bodySha256}`;
  }
  if (!DELIVERY_ID.test(deliveryId)) return { kind: 'refuse', status: 400, reason: 'delivery_id_malformed' };
  const rate = bucketCheck(input.bucket, hook.limits, input.now);
  if (!rate.ok) {
    return {
      kind: 'refuse',
      status: 429,
      reason: 'rate_limited',
      retryAfterSec: Math.max(1, Math.ceil(rate.retryAfterMs / 1000)),
    };
  }
  return {
    kind: 'deliver',
    key: `webhook:${hook.name}:${deliveryId}`,
    deliveryId,
    event,
    contentSha256: input.bodySha256,
  };
}

/** The answer once the injector has the delivery: 202 accepted, 200 for a delivery seen before. */
export function deliveredStatus(outcome: 'accepted' | 'duplicate'): 202 | 200 {
  return outcome === 'accepted' ? 202 : 200;
}

function header(headers: DeliveryInput['headers'], name: string): string | undefined {
  const value = headers[name];
  const one = Array.isArray(value) ? value[0] : value;
  const trimmed = one?.trim();
  return trimmed ? trimmed : undefined;
}
