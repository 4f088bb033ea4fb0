/**
 * A webhook's signature check: the HMAC-SHA256 of what was signed — the raw body, or for a generic hook
 * `<timestamp>.<raw body>` ({@link signedContent}) — under the hook's secret, compared with
 * the header's digest in constant time (`timingSafeEqual` over the 32 bytes), so the answer's timing says
 * nothing about how much of a forged digest was right. What the header must look like is the core's
 * (`core/automation/webhook-intake.ts`).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { type SignatureCheck, signatureDigest } from '../../core/automation/webhook-intake.js';

/** What a hook signs: the body, or with a timestamp (generic hooks) `<timestamp>.<body>`. */
export function signedContent(body: Uint8Array, timestamp?: number): Uint8Array {
  return timestamp === undefined ? body : Buffer.concat([Buffer.from(`${timestamp}.`), body]);
}

/** Checks `header` (e.g. `sha256=…`) against the HMAC under `secret` of what was signed ({@link signedContent}). */
export function checkSignature(header: string | undefined, secret: string, body: Uint8Array): SignatureCheck {
  const digest = signatureDigest(header);
  if (!digest.ok) return digest.problem;
  const expected = createHmac('sha256', secret).update(body).digest();
  const given = Buffer.from(digest.hex, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected) ? 'valid' : 'mismatch';
}

/**
 * The header value a sender computes for `body`: `sha256=<hex HMAC>` (tests and the README's examples);
 * with `timestamp` (a generic hook's `X-Signature-Timestamp`), of `<timestamp>.<body>`.
 */
export function signBody(secret: string, body: Uint8Array | string, timestamp?: number): string {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return `sha256=${createHmac('sha256', secret).update(signedContent(bytes, timestamp)).digest('hex')}`;
}

/** SHA-256 of the body, hex. */
export function bodySha256(body: Uint8Array): string {
  return createHash('sha256').update(body).digest('hex');
}
