import { describe, expect, it } from 'vitest';
import {
  type DeliveryInput,
  deliveredStatus,
  type HookRule,
  judgeDelivery,
  routeHookRequest,
  signatureDigest,
  signedTimestamp,
  TIMESTAMP_TOLERANCE_MS,
} from '../../src/core/automation/webhook-intake.js';
import { fullBucket } from '../../src/core/telegram/token-bucket.js';

const LIMITS = { perMinute: 60, burst: 1 };
const github: HookRule = {
  name: 'github',
  kind: 'github',
  route: { chatId: -100, threadId: 42 },
  events: ['workflow_run', 'push'],
  limits: LIMITS,
};
const unlisted: HookRule = { name: 'all', kind: 'github', route: { chatId: -100 }, limits: LIMITS };
const filtered: HookRule = { ...github, name: 'ci', events: ['workflow_run'] };
const generic: HookRule = { name: 'alerts', kind: 'generic', route: { chatId: 7 }, limits: LIMITS };
const HOOKS = new Map([github, filtered, generic].map((h) => [h.name, h]));
const HEX = 'a'.repeat(64);

describe('routing a request to its hook', () => {
  it.each([
    ['a configured hook', 'POST', '/hooks/github', { ok: true, hook: github }],
    ['a query string is not part of the name', 'POST', '/hooks/alerts?x=1', { ok: true, hook: generic }],
    ['an unknown hook', 'POST', '/hooks/nope', { ok: false, status: 404, reason: 'unknown_hook' }],
    ['another path', 'POST', '/github', { ok: false, status: 404, reason: 'unknown_hook' }],
    ['a deeper path', 'POST', '/hooks/github/x', { ok: false, status: 404, reason: 'unknown_hook' }],
    ['a bad escape', 'POST', '/hooks/%E0%A4%A', { ok: false, status: 404, reason: 'unknown_hook' }],
    ['GET of a hook', 'GET', '/hooks/github', { ok: false, status: 405, reason: 'method_not_allowed' }],
  ])('%s', (_what, method, url, expected) => {
    expect(routeHookRequest(method, url, HOOKS)).toEqual(expected);
  });
});

describe('the signature header', () => {
  it.each([
    [undefined, { ok: false, problem: 'missing' }],
    ['  ', { ok: false, problem: 'missing' }],
    [`sha1=${'a'.repeat(40)}`, { ok: false, problem: 'malformed' }],
    [`sha256=${'a'.repeat(63)}`, { ok: false, problem: 'malformed' }],
    [`sha256=${'z'.repeat(64)}`, { ok: false, problem: 'malformed' }],
    [`sha256=${'AB'.repeat(32)}`, { ok: true, hex: 'ab'.repeat(32) }],
  ])('%j → %j', (header, expected) => {
    expect(signatureDigest(header)).toEqual(expected);
  });
});

const input = (over: Partial<DeliveryInput>): DeliveryInput => ({
  hook: github,
  headers: { 'x-github-event': 'workflow_run', 'x-github-delivery': 'd-1' },
  signature: 'valid',
  bodySha256: HEX,
  bucket: fullBucket(LIMITS, 0),
  now: 0,
  ...over,
});

describe('judging a delivery', () => {
  it.each<[string, Partial<DeliveryInput>, unknown]>([
    [
      'a signed GitHub delivery',
      {},
      {
        kind: 'deliver',
        key: 'webhook:github:d-1',
        deliveryId: 'd-1',
        event: 'workflow_run',
        contentSha256: HEX,
      },
    ],
    ['no signature', { signature: 'missing' }, { kind: 'refuse', status: 401, reason: 'signature_missing' }],
    [
      'a malformed one',
      { signature: 'malformed' },
      { kind: 'refuse', status: 401, reason: 'signature_malformed' },
    ],
    [
      'a forged one',
      { signature: 'mismatch' },
      { kind: 'refuse', status: 401, reason: 'signature_mismatch' },
    ],
    [
      'a forged ping is still refused',
      { signature: 'mismatch', headers: { 'x-github-event': 'ping' } },
      { kind: 'refuse', status: 401, reason: 'signature_mismatch' },
    ],
    [
      'ping',
      { headers: { 'x-github-event': 'ping', 'x-github-delivery': 'p' } },
      { kind: 'ignore', status: 200, reason: 'ping' },
    ],
    [
      'no event header',
      { headers: { 'x-github-delivery': 'd' } },
      { kind: 'refuse', status: 400, reason: 'event_missing' },
    ],
    [
      'no delivery id',
      { headers: { 'x-github-event': 'push' } },
      { kind: 'refuse', status: 400, reason: 'delivery_id_missing' },
    ],
    [
      'a delivery id with a space',
      { headers: { 'x-github-event': 'push', 'x-github-delivery': 'a b' } },
      { kind: 'refuse', status: 400, reason: 'delivery_id_malformed' },
    ],
    [
      'an event the hook does not take',
      { hook: filtered, headers: { 'x-github-event': 'push', 'x-github-delivery': 'd' } },
      { kind: 'ignore', status: 200, reason: 'filtered' },
    ],
    [
      'a GitHub hook that lists no events takes none (issue 27: no stranger’s text by default)',
      { hook: unlisted },
      { kind: 'ignore', status: 200, reason: 'filtered' },
    ],
    [
      'an event it takes',
      { hook: filtered },
      {
        kind: 'deliver',
        key: 'webhook:ci:d-1',
        deliveryId: 'd-1',
        event: 'workflow_run',
        contentSha256: HEX,
      },
    ],
    [
      'a generic delivery with its id',
      { hook: generic, headers: { 'x-delivery-id': 'abc' }, timestamp: 0 },
      { kind: 'deliver', key: 'webhook:alerts:abc', deliveryId: 'abc', event: undefined, contentSha256: HEX },
    ],
    [
      'a generic delivery without one: the body’s hash',
      { hook: generic, headers: {}, timestamp: 0 },
      {
        kind: 'deliver',
        key: `webhook:alerts:sha256-${HEX}`,
        deliveryId: `sha256-${HEX}`,
        event: undefined,
        contentSha256: HEX,
      },
    ],
    [
      'a generic delivery without its signed timestamp: refused before the signature is looked at',
      { hook: generic, headers: {}, timestamp: 'missing', signature: 'mismatch' },
      { kind: 'refuse', status: 401, reason: 'timestamp_missing' },
    ],
    [
      'a generic delivery whose timestamp is not Unix seconds',
      { hook: generic, headers: {}, timestamp: 'malformed' },
      { kind: 'refuse', status: 401, reason: 'timestamp_malformed' },
    ],
    [
      'a generic delivery signed more than 5 minutes ago (a captured one replayed)',
      { hook: generic, headers: {}, timestamp: 1_000, now: 1_000_000 + TIMESTAMP_TOLERANCE_MS + 1 },
      { kind: 'refuse', status: 401, reason: 'timestamp_stale' },
    ],
    [
      'a generic delivery signed for more than 5 minutes from now',
      { hook: generic, headers: {}, timestamp: 1_000, now: 1_000_000 - TIMESTAMP_TOLERANCE_MS - 1 },
      { kind: 'refuse', status: 401, reason: 'timestamp_stale' },
    ],
    [
      'a generic delivery within the tolerance',
      {
        hook: generic,
        headers: { 'x-delivery-id': 'in' },
        timestamp: 1_000,
        now: 1_000_000 + TIMESTAMP_TOLERANCE_MS,
      },
      { kind: 'deliver', key: 'webhook:alerts:in', deliveryId: 'in', event: undefined, contentSha256: HEX },
    ],
    [
      'a stale generic delivery with a forged signature: the signature is what it is refused for',
      { hook: generic, headers: {}, timestamp: 1, now: 1_000_000_000, signature: 'mismatch' },
      { kind: 'refuse', status: 401, reason: 'signature_mismatch' },
    ],
    [
      'over the rate',
      { bucket: { tokens: 0, at: 0 }, now: 500 },
      { kind: 'refuse', status: 429, reason: 'rate_limited', retryAfterSec: 1 },
    ],
    [
      'over the rate, but ignored first (ping takes no token)',
      { bucket: { tokens: 0, at: 0 }, headers: { 'x-github-event': 'ping' } },
      { kind: 'ignore', status: 200, reason: 'ping' },
    ],
  ])('%s', (_what, over, expected) => {
    expect(judgeDelivery(input(over))).toEqual(expected);
  });

  it.each<[string, Record<string, string>, unknown]>([
    ['digits', { 'x-signature-timestamp': '1764662400' }, 1_764_662_400],
    ['missing', {}, 'missing'],
    ['empty', { 'x-signature-timestamp': ' ' }, 'missing'],
    ['milliseconds written as a fraction', { 'x-signature-timestamp': '1764662400.5' }, 'malformed'],
    ['a date', { 'x-signature-timestamp': '2026-12-02T10:00:00Z' }, 'malformed'],
  ])('a generic hook’s signed timestamp: %s', (_what, headers, expected) => {
    expect(signedTimestamp('generic', headers)).toBe(expected);
    expect(signedTimestamp('github', headers)).toBeUndefined();
  });

  it('answers 202 for an accepted delivery and 200 for one seen before', () => {
    expect([deliveredStatus('accepted'), deliveredStatus('duplicate')]).toEqual([202, 200]);
  });
});
