/**
 * The schedule tools (`io/mcp/schedule-tools.ts`): a call's arguments become the gateway's request, the
 * endpoint answers it with the gateway's result as plain JSON, and a call the gateway never answers says
 * so instead of hanging.
 */
import { type FrameOf, ManualClock, silentLogger } from '@switchyard/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpEndpoint, type McpEndpoint } from '../src/io/mcp/endpoint.js';
import { createScheduleAsker, scheduleToolCall } from '../src/io/mcp/schedule-tools.js';

const SECRET = 'a'.repeat(43);
const running: McpEndpoint[] = [];
afterEach(async () => {
  for (const endpoint of running.splice(0)) await endpoint.stop();
});

describe('schedule tools', () => {
  it('a call becomes a request naming the action and only the arguments given', () => {
    expect(scheduleToolCall('schedule_add', { prompt: 'check the build', cron: '0 9 * * 1-5' })).toEqual({
      ok: true,
      call: { action: 'add', prompt: 'check the build', cron: '0 9 * * 1-5' },
    });
    expect(scheduleToolCall('schedule_list', {})).toEqual({ ok: true, call: { action: 'list' } });
    expect(scheduleToolCall('schedule_remove', { which: 'chat-3' })).toEqual({
      ok: true,
      call: { action: 'remove', which: 'chat-3' },
    });
    expect(scheduleToolCall('schedule_add', { cron: '* * * * *' })).toMatchObject({ ok: false });
    expect(scheduleToolCall('send_file', { path: 'a' })).toBeUndefined();
  });

  it('the asker sends the request with the route and resolves with the answer of its id', async () => {
    const clock = new ManualClock(0);
    const sent: FrameOf<'schedule_request'>[] = [];
    const asker = createScheduleAsker({ send: async (frame) => void sent.push(frame), clock });
    const answer = asker.ask({ chatId: 5, threadId: 2 }, { action: 'list' });
    expect(sent).toEqual([
      {
        type: 'schedule_request',
        requestId: sent[0]?.requestId,
        route: { chatId: 5, threadId: 2 },
        action: 'list',
      },
    ]);
    asker.answer({ type: 'schedule_result', requestId: 'someone-else', ok: true, text: 'no' });
    asker.answer({
      type: 'schedule_result',
      requestId: sent[0]?.requestId ?? '',
      ok: true,
      text: '1 schedule',
    });
    expect(await answer).toEqual({ ok: true, text: '1 schedule' });
  });

  it('a request the gateway does not answer in time is answered so, and its late answer is dropped', async () => {
    const clock = new ManualClock(0);
    const sent: FrameOf<'schedule_request'>[] = [];
    const asker = createScheduleAsker({
      send: async (frame) => void sent.push(frame),
      clock,
      answerMs: 1000,
    });
    const answer = asker.ask({ chatId: 5 }, { action: 'list' });
    clock.advance(1000);
    expect(await answer).toMatchObject({
      ok: false,
      text: expect.stringContaining('did not answer in time'),
    });
    asker.answer({ type: 'schedule_result', requestId: sent[0]?.requestId ?? '', ok: true, text: 'late' });
  });

  it('the endpoint answers a schedule tool call with the result as JSON', async () => {
    const calls: unknown[] = [];
    const endpoint = createMcpEndpoint({
      secret: SECRET,
      call: async () => ({ ok: true, text: 'unused' }),
      rejoin: () => undefined,
      schedule: async (call) => {
        calls.push(call);
        return { ok: false, text: 'cron: a schedule made from a chat repeats at most once a minute' };
      },
      version: 'test',
      log: silentLogger,
    });
    running.push(endpoint);
    const port = await endpoint.start();
    const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${SECRET}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'schedule_add', arguments: { prompt: 'p', cron: '* * * * * *' } },
      }),
    });
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 9,
      result: {
        content: [{ type: 'text', text: 'cron: a schedule made from a chat repeats at most once a minute' }],
        isError: true,
      },
    });
    expect(calls).toEqual([{ action: 'add', prompt: 'p', cron: '* * * * * *' }]);
  });
});
