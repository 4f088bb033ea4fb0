/**
 * The process logger never writes a bot token, an Anthropic key or a user's text, whatever the depth of
 * the field that carries it: pino's own `redact` paths name fixed depths, which is the failure pinned here.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, destinationFor, scrubLogFields } from '../src/log.js';

const BOT_TOKEN = '1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq';
const API_KEY = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789';

function capture(): { lines: () => string; stream: Writable } {
  let out = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      out += chunk.toString();
      done();
    },
  });
  return { lines: () => out, stream };
}

describe('log', () => {
  it('censors secret and text fields at any depth, and secrets inside any string', () => {
    const { lines, stream } = capture();
    const logger = createLogger({ agent: 'demo', service: 'test' }, {}, stream as never);
    logger.child({ deep: { config: { token: 'plain-token-value' } } }).warn(
      {
        event: 'x',
        a: { b: { c: { d: { token: 'nested-secret', apiKey: 'k', Text: 'hello from a user' } } } },
        list: [{ caption: 'a photo caption' }, `url https://api.telegram.org/bot${BOT_TOKEN}/getMe`],
        err: new Error(`failed with ${API_KEY}`),
      },
      `message mentioning ${BOT_TOKEN}`,
    );
    const out = lines();
    expect(out).toContain('"event":"x"');
    for (const secret of [
      BOT_TOKEN,
      API_KEY,
      'nested-secret',
      'plain-token-value',
      'hello from a user',
      'a photo caption',
    ]) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain('[redacted]');
    // What is not secret stays readable.
    expect(out).toContain('https://api.telegram.org/bot[redacted]/getMe');
    expect(out).toContain('message mentioning [redacted]');
  });

  it('cuts cycles instead of following them', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    expect(scrubLogFields(a)).toEqual({ name: 'a', self: '[…]' });
  });

  it('prints readable lines at a terminal, and JSON elsewhere and under systemd', () => {
    const terminal = {
      isTTY: true,
      out: '',
      write(chunk: string) {
        this.out += chunk;
      },
    };
    const logger = createLogger({ agent: 'demo', service: 'run' }, {}, destinationFor({}, terminal));
    logger.warn({ event: 'poll_failed', attempt: 1 }, 'cannot reach Telegram');
    expect(terminal.out).toMatch(
      /^\S*\d\d:\d\d:\d\d\.\d{3} WARN {2}demo\/run: cannot reach Telegram event=poll_failed attempt=1\S*\n$/,
    );
    expect(terminal.out).not.toContain('{');

    const pipe = { isTTY: false, write: () => true };
    expect(destinationFor({}, pipe)).toBeUndefined();
    expect(destinationFor({ SWITCHYARD_LOG_FORMAT: 'json' }, terminal)).toBeUndefined();
    const journal = {
      isTTY: true,
      out: '',
      write(chunk: string) {
        this.out += chunk;
      },
    };
    createLogger({ service: 'gateway' }, {}, destinationFor({ JOURNAL_STREAM: '8:1' }, journal)).error(
      { event: 'x' },
      'boom',
    );
    expect(journal.out).toMatch(/^<3>\{"level":50,/);
  });

  it('writes each key once: nested children join their components, and a field wins over a binding', () => {
    const { lines, stream } = capture();
    // As the gateway's components nest: service logger → gateway → protocol → protocol-server.
    const root = createLogger({ agent: 'demo', service: 'gateway' }, {}, stream as never);
    root
      .child({ component: 'gateway', agent: 'demo' })
      .child({ component: 'protocol' })
      .child({ component: 'protocol-server' })
      .info({ event: 'listening', agent: 'demo' }, 'waiting for the bridge');
    root.child({ component: 'supervisor' }).info({ event: 'service_started', service: 'bridge' });
    const [first = '', second = ''] = lines().trim().split('\n');
    const keys = (line: string) => [...line.matchAll(/"([^"]+)":/g)].map((m) => m[1]);
    for (const line of [first, second]) {
      const all = keys(line);
      expect(all, line).toEqual([...new Set(all)]);
    }
    expect(JSON.parse(first)).toMatchObject({
      agent: 'demo',
      service: 'gateway',
      component: 'gateway.protocol.protocol-server',
      event: 'listening',
    });
    expect(JSON.parse(second)).toMatchObject({ component: 'supervisor', service: 'bridge' });
  });
});
