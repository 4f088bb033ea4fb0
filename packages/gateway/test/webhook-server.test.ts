/**
 * The webhook receiver over real HTTP on 127.0.0.1, with a fake injector: what each request is
 * answered and what reaches the injector (a signed delivery once, with its payload file; nothing for a
 * forged, unknown, oversized, replayed, ping or rate-limited one).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, silentLogger } from '@switchyard/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { AutomationRun } from '../src/io/automation/inject.js';
import { signBody } from '../src/io/automation/signature.js';
import type { ListenerLimits, WebhookHookOptions } from '../src/io/automation/webhook-options.js';
import {
  createWebhookServer,
  type WebhookResult,
  type WebhookServer,
} from '../src/io/automation/webhook-server.js';

const SECRET = 'It is a secret to everybody';
const HOOKS: WebhookHookOptions[] = [
  {
    name: 'github',
    kind: 'github',
    secret: SECRET,
    route: { chatId: -1001, threadId: 42 },
    events: ['workflow_run'],
    maxBodyBytes: 4096,
  },
  {
    name: 'alerts',
    kind: 'generic',
    secret: 'other',
    route: { chatId: 7 },
    rate: { perMinute: 1, burst: 1 },
  },
];
const RUN = {
  action: 'completed',
  repository: { full_name: 'acme/app' },
  workflow_run: { name: 'CI', conclusion: 'failure', head_branch: 'main', html_url: 'https://x/runs/1' },
};

let server: WebhookServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/**
 * A receiver with a fake injector that keeps what it was given and takes each key, and each hook's
 * signed content, once (as the store does, `store/automation-runs.ts`).
 */
async function start(clock = new ManualClock(1_000_000), limits?: Partial<ListenerLimits>) {
  dir = mkdtempSync(join(tmpdir(), 'hooks-'));
  const runs: AutomationRun[] = [];
  const keys = new Set<string>();
  const results: Array<[string, WebhookResult]> = [];
  server = createWebhookServer({
    listen: { host: '127.0.0.1', port: 0 },
    hooks: HOOKS,
    ...(limits ? { limits } : {}),
    injector: {
      inject(run) {
        const content = run.contentSha256 && `${run.origin.name}:${run.contentSha256}`;
        if (keys.has(run.key) || (content && keys.has(content))) return 'duplicate';
        keys.add(run.key);
        if (content) keys.add(content);
        runs.push(run);
        return 'accepted';
      },
    },
    exchange: { dir },
    onResult: (hook, result) => results.push([hook, result]),
    clock,
    logger: silentLogger,
  });
  const url = await server.start();
  return { url, runs, results, dir, clock };
}

/** POSTs `body`; resolves with the status and headers even when the server closes the connection early. */
function post(
  url: string,
  path: string,
  body: string | Buffer,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: 'POST', headers }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const githubHeaders = (body: string, over: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  'x-github-event': 'workflow_run',
  'x-github-delivery': 'delivery-1',
  'x-hub-signature-256': signBody(SECRET, body),
  ...over,
});

describe('webhook receiver', () => {
  it('a signed GitHub workflow_run is injected once, with its summary and its payload as a JSON file', async () => {
    const { url, runs, dir } = await start();
    const body = JSON.stringify(RUN);
    const first = await post(url, '/hooks/github', body, githubHeaders(body));
    expect(first.status).toBe(202);
    expect(runs).toHaveLength(1);
    const run = runs[0] as AutomationRun;
    expect(run).toMatchObject({
      key: 'webhook:github:delivery-1',
      route: { chatId: -1001, threadId: 42 },
      origin: { kind: 'webhook', name: 'github' },
      note: '🪝 github · [acme/app] workflow_run completed: CI · failure · on main · https://x/runs/1',
    });
    expect(run.text).toContain('<untrusted_input source="webhook github">\n{"event":"workflow_run"');
    const file = run.attachments?.[0];
    expect(file).toMatchObject({
      kind: 'document',
      mime: 'application/json',
      name: 'workflow_run-delivery-1.json',
    });
    expect(JSON.parse(readFileSync(file?.path ?? '', 'utf8'))).toEqual(RUN);

    // GitHub's redelivery: the same id is answered 200 and reaches nothing; its file is not kept.
    const again = await post(url, '/hooks/github', body, githubHeaders(body));
    expect(again.status).toBe(200);
    expect(runs).toHaveLength(1);
    expect(readdirSync(dir)).toHaveLength(1);
  });

  it.each<
    [
      string,
      string,
      Record<string, string> | ((body: string) => Record<string, string>),
      number,
      WebhookResult,
    ]
  >([
    [
      'a forged signature',
      '/hooks/github',
      (b) => githubHeaders(b, { 'x-hub-signature-256': signBody('wrong', b) }),
      401,
      'signature_mismatch',
    ],
    [
      'no signature',
      '/hooks/github',
      { 'x-github-event': 'push', 'x-github-delivery': 'x' },
      401,
      'signature_missing',
    ],
    [
      'the generic header on a GitHub hook',
      '/hooks/github',
      (b) => ({ 'x-signature-256': signBody(SECRET, b) }),
      401,
      'signature_missing',
    ],
    ['an unknown hook', '/hooks/nope', (b) => githubHeaders(b), 404, 'unknown_hook'],
    ['ping', '/hooks/github', (b) => githubHeaders(b, { 'x-github-event': 'ping' }), 200, 'ping'],
  ])('%s: answered as the rules say, nothing delivered', async (_what, path, headers, status, result) => {
    const { url, runs, results, dir } = await start();
    const body = JSON.stringify(RUN);
    const answer = await post(url, path, body, typeof headers === 'function' ? headers(body) : headers);
    expect(answer.status).toBe(status);
    expect(runs).toEqual([]);
    expect(results.at(-1)?.[1]).toBe(result);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a body over the limit is refused with 413 before it is read, declared or not', async () => {
    const { url, runs } = await start();
    const big = JSON.stringify({ pad: 'x'.repeat(5000) });
    const declared = await post(url, '/hooks/github', big, githubHeaders(big));
    expect(declared.status).toBe(413);
    const chunked = await post(url, '/hooks/github', big, {
      ...githubHeaders(big),
      'transfer-encoding': 'chunked',
    });
    expect(chunked.status).toBe(413);
    expect(runs).toEqual([]);
  });

  it('a generic hook: its id, or the body’s hash as its id; over its rate 429 with Retry-After', async () => {
    const { url, runs, clock } = await start();
    const body = 'disk 91% full on db-1';
    const at = Math.floor(clock.now() / 1000);
    const stamp = { 'x-signature-timestamp': String(at) };
    const sign = { 'x-signature-256': signBody('other', body, at), ...stamp };
    expect((await post(url, '/hooks/alerts', body, sign)).status).toBe(202);
    expect(runs[0]?.key).toMatch(/^webhook:alerts:sha256-[0-9a-f]{64}$/);
    expect(runs[0]?.text).toContain('disk 91% full on db-1');
    expect(runs[0]?.attachments?.[0]).toMatchObject({ mime: 'text/plain' });
    const other = 'disk 95% full on db-1';
    const otherHeaders = {
      'x-signature-256': signBody('other', other, at),
      'x-delivery-id': 'a-2',
      ...stamp,
    };
    const limited = await post(url, '/hooks/alerts', other, otherHeaders);
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('60');
    expect(runs).toHaveLength(1);
    clock.advance(60_000);
    // The same body again is the same delivery: 200, and it takes no token of the rate.
    expect((await post(url, '/hooks/alerts', body, sign)).status).toBe(200);
    expect((await post(url, '/hooks/alerts', other, otherHeaders)).status).toBe(202);
    expect(runs.map((r) => r.key)).toEqual([runs[0]?.key, 'webhook:alerts:a-2']);
  });
});

describe('webhook receiver: replays and listener limits', () => {
  it('a captured GitHub delivery replayed under a new delivery id is not delivered again (200, duplicate)', async () => {
    const { url, runs, results } = await start();
    const body = JSON.stringify(RUN);
    expect((await post(url, '/hooks/github', body, githubHeaders(body))).status).toBe(202);
    const replay = githubHeaders(body, { 'x-github-delivery': 'delivery-2' });
    expect((await post(url, '/hooks/github', body, replay)).status).toBe(200);
    expect(runs).toHaveLength(1);
    expect(runs[0]?.contentSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(results.at(-1)).toEqual(['github', 'duplicate']);
  });

  it('a generic delivery needs its signed timestamp: missing, unsigned, stale or from the future → 401; fresh → 202', async () => {
    const { url, runs, results, clock } = await start();
    const body = 'disk 91% full on db-1';
    const now = Math.floor(clock.now() / 1000);
    const signed = (at: number, over: Record<string, string> = {}) => ({
      'x-signature-256': signBody('other', body, at),
      'x-signature-timestamp': String(at),
      ...over,
    });
    const cases: Array<[Record<string, string>, number, WebhookResult]> = [
      [{ 'x-signature-256': signBody('other', body) }, 401, 'timestamp_missing'],
      [
        { 'x-signature-256': signBody('other', body), 'x-signature-timestamp': 'soon' },
        401,
        'timestamp_malformed',
      ],
      // The timestamp is part of what is signed: one changed after signing does not match.
      [signed(now, { 'x-signature-timestamp': String(now + 1) }), 401, 'signature_mismatch'],
      [signed(now - 301), 401, 'timestamp_stale'],
      [signed(now + 301), 401, 'timestamp_stale'],
      [signed(now - 299), 202, 'accepted'],
    ];
    for (const [headers, status, result] of cases) {
      expect((await post(url, '/hooks/alerts', body, headers)).status, result).toBe(status);
      expect(results.at(-1)).toEqual(['alerts', result]);
    }
    expect(runs).toHaveLength(1);
  });

  it('an address refused for bad signatures 10 times in a minute is refused (429) before its body is read, for 10 minutes', async () => {
    const { url, runs, results, clock } = await start();
    const body = JSON.stringify(RUN);
    const forged = githubHeaders(body, { 'x-hub-signature-256': signBody('guess', body) });
    for (let i = 0; i < 10; i++) expect((await post(url, '/hooks/github', body, forged)).status).toBe(401);
    // Blocked now, even with a good signature.
    const blocked = await post(url, '/hooks/github', body, githubHeaders(body));
    expect(blocked.status).toBe(429);
    expect(blocked.headers['retry-after']).toBe('600');
    expect(results.at(-1)).toEqual(['unknown', 'address_blocked']);
    expect(runs).toEqual([]);
    clock.advance(600_000);
    expect((await post(url, '/hooks/github', body, githubHeaders(body))).status).toBe(202);
    expect(runs).toHaveLength(1);
  });

  it('bad signatures spread out over more than a minute block nothing', async () => {
    const { url, clock } = await start();
    const body = JSON.stringify(RUN);
    const forged = githubHeaders(body, { 'x-hub-signature-256': signBody('guess', body) });
    for (let i = 0; i < 20; i++) {
      expect((await post(url, '/hooks/github', body, forged)).status).toBe(401);
      clock.advance(7_000);
    }
    expect((await post(url, '/hooks/github', body, githubHeaders(body))).status).toBe(202);
  });

  it('behind a proxy (forwardedFor): the last X-Forwarded-For entry is the address, so one sender does not block the proxy', async () => {
    const { url } = await start(new ManualClock(1_000_000), { forwardedFor: true });
    const body = JSON.stringify(RUN);
    const forged = githubHeaders(body, {
      'x-hub-signature-256': signBody('guess', body),
      'x-forwarded-for': '203.0.113.7',
    });
    for (let i = 0; i < 10; i++) expect((await post(url, '/hooks/github', body, forged)).status).toBe(401);
    expect((await post(url, '/hooks/github', body, forged)).status).toBe(429);
    const other = githubHeaders(body, { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' });
    expect((await post(url, '/hooks/github', body, other)).status).toBe(202);
  });

  it('connections over the cap are closed as they come; a sender that never finishes its headers is cut off', async () => {
    const { url } = await start(new ManualClock(1_000_000), { maxConnections: 2, headersTimeoutMs: 500 });
    const { port } = new URL(url);
    const open = () =>
      new Promise<Socket>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => resolve(socket));
        socket.on('error', reject);
      });
    const closed = (socket: Socket) =>
      new Promise<number>((resolve) => {
        const started = Date.now();
        socket.on('close', () => resolve(Date.now() - started));
        socket.on('error', () => {});
        // Read what comes (the 408), or the end and the close never arrive.
        socket.resume();
      });
    // Two senders holding half-written requests: at the cap.
    const slow = [await open(), await open()];
    for (const socket of slow) socket.write('POST /hooks/github HTTP/1.1\r\nHost: x\r\n');
    const slowClosed = slow.map(closed);
    const third = await open();
    expect(await closed(third)).toBeLessThan(1_000);
    // The slow ones are cut off once their headers are overdue (with a 408), not held open for good.
    for (const ms of await Promise.all(slowClosed)) expect(ms).toBeLessThan(3_000);
  });
});
