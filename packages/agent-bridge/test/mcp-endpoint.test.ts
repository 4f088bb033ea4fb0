/**
 * Switchyard's MCP endpoint over real HTTP on 127.0.0.1, in this process: only the conversation's own
 * secret (and a loopback Host) reaches a tool; the tools are listed with JSON Schemas; a call is
 * answered on an SSE stream primed with a resume token, and a client reconnecting with that token
 * after a restart gets the same call's answer from the next endpoint, not a second send.
 */
import { request } from 'node:http';
import { silentLogger } from '@switchyard/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpEndpoint, type McpEndpoint } from '../src/io/mcp/endpoint.js';
import type { ToolAnswer, ToolCallInput } from '../src/io/mcp/server.js';

const SECRET = 'a'.repeat(43);
const running: McpEndpoint[] = [];
afterEach(async () => {
  for (const endpoint of running.splice(0)) await endpoint.stop();
});

interface Fake {
  calls: { key: string; call: ToolCallInput }[];
  answers: Map<string, Promise<ToolAnswer>>;
}

const start = async (fake: Fake, port?: number): Promise<{ url: string; endpoint: McpEndpoint }> => {
  const endpoint = createMcpEndpoint({
    port,
    secret: SECRET,
    call: (key, call) => {
      fake.calls.push({ key, call });
      const answer = Promise.resolve({ ok: true, text: `Sent ${call.paths.join(', ')}` });
      fake.answers.set(key, answer);
      return answer;
    },
    rejoin: (key) => fake.answers.get(key),
    retryMs: 50,
    version: 'test',
    log: silentLogger,
  });
  running.push(endpoint);
  const at = await endpoint.start();
  return { url: `http://127.0.0.1:${at}/mcp`, endpoint };
};

const post = (url: string, body: object, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${SECRET}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });

/** The status of a `tools/list` sent with this Host header (fetch does not let a caller set Host). */
const statusWithHost = (url: string, host: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: { host, authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
  });

/** The SSE events of a response body: id, retry and data of each. */
const events = async (response: Response): Promise<Record<string, string>[]> =>
  (await response.text())
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event: Record<string, string> = {};
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        event[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
      }
      return event;
    });

const fresh = (): Fake => ({ calls: [], answers: new Map() });
const callSendFile = {
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 'send_file', arguments: { path: 'a.txt' } },
};

describe('MCP endpoint', () => {
  it('refuses a request without this conversation’s secret, or with a foreign Host, before any tool', async () => {
    const fake = fresh();
    const { url } = await start(fake);
    expect((await post(url, callSendFile, { authorization: `Bearer ${'b'.repeat(43)}` })).status).toBe(403);
    expect((await post(url, callSendFile, { authorization: '' })).status).toBe(403);
    expect(await statusWithHost(url, 'evil.example')).toBe(403);
    expect(await statusWithHost(url, new URL(url).host)).toBe(200);
    expect(fake.calls).toEqual([]);
  });

  it('answers initialize and lists the file and schedule tools with JSON Schemas', async () => {
    const { url } = await start(fresh());
    const init = await (
      await post(url, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18' },
      })
    ).json();
    expect(init).toMatchObject({
      id: 1,
      result: { protocolVersion: '2025-06-18', serverInfo: { name: 'switchyard' } },
    });
    expect((await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    const list = (await (await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/list' })).json()) as {
      result: { tools: { name: string; inputSchema: { type: string; required?: string[] } }[] };
    };
    expect(list.result.tools.map((t) => t.name)).toEqual([
      'send_file',
      'send_photo',
      'send_files',
      'schedule_add',
      'schedule_list',
      'schedule_remove',
    ]);
    expect(list.result.tools[2]?.inputSchema).toMatchObject({ type: 'object', required: ['paths'] });
  });

  it('answers a call on an SSE stream primed with a resume token and a retry hint', async () => {
    const fake = fresh();
    const { url } = await start(fake);
    const [prime, result] = await events(await post(url, callSendFile));
    expect(prime).toMatchObject({ retry: '50', data: '' });
    expect(prime?.id).toBe(result?.id);
    expect(JSON.parse(result?.data ?? '')).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: { content: [{ type: 'text', text: 'Sent a.txt' }] },
    });
    expect(fake.calls.map((c) => c.call)).toEqual([
      { tool: 'send_file', paths: ['a.txt'], caption: undefined },
    ]);
  });

  it('a client reconnecting with Last-Event-ID after a restart gets the same call’s answer, sent once', async () => {
    const fake = fresh();
    const first = await start(fake);
    const [prime] = await events(await post(first.url, callSendFile));
    const port = Number(new URL(first.url).port);
    await first.endpoint.stop();
    const second = await start(fake, port);
    expect(second.url).toBe(first.url);
    const resumed = await fetch(second.url, {
      headers: {
        authorization: `Bearer ${SECRET}`,
        accept: 'text/event-stream',
        'last-event-id': prime?.id ?? '',
      },
    });
    const [, answer] = await events(resumed);
    expect(JSON.parse(answer?.data ?? '')).toMatchObject({
      id: 7,
      result: { content: [{ text: 'Sent a.txt' }] },
    });
    expect(fake.calls).toHaveLength(1);
  });

  it('a reconnect for a call the outbox never got answers that nothing was sent', async () => {
    const { url } = await start(fresh());
    const token = Buffer.from(JSON.stringify([9, 'unknown-key'])).toString('base64url');
    const resumed = await fetch(url, {
      headers: { authorization: `Bearer ${SECRET}`, accept: 'text/event-stream', 'last-event-id': token },
    });
    const [, answer] = await events(resumed);
    expect(JSON.parse(answer?.data ?? '')).toMatchObject({
      id: 9,
      result: { isError: true, content: [{ text: expect.stringContaining('nothing was sent') }] },
    });
  });
});
