import { afterEach, describe, expect, it } from 'vitest';
import {
  bash,
  createScriptedModel,
  hang,
  overloaded,
  rateLimited,
  rule,
  type ScriptedModel,
  say,
  viewRequest,
} from '../src/index.js';

const started: ScriptedModel[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((m) => m.stop()));
});

async function serve(...args: Parameters<typeof createScriptedModel>) {
  const model = createScriptedModel(...args);
  started.push(model);
  const { baseUrl } = await model.start();
  return { model, baseUrl };
}

const reminder = '<system-reminder>\nAttribution …\n</system-reminder>\n';

function body(messages: unknown[], extra: Record<string, unknown> = {}) {
  return {
    model: 'claude-opus-5-5',
    max_tokens: 1000,
    stream: true,
    system: [
      { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.328; cc_entrypoint=sdk-cli;' },
    ],
    tools: [{ name: 'Agent' }, { name: 'Bash' }],
    messages,
    ...extra,
  };
}

function userText(text: string) {
  return {
    role: 'user',
    content: [
      { type: 'text', text: reminder },
      { type: 'text', text },
    ],
  };
}

function post(baseUrl: string, payload: unknown, path = '/v1/messages?beta=true') {
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-test' },
    body: JSON.stringify(payload),
  });
}

function parseSse(text: string): { event: string; data: { type: string; [k: string]: unknown } }[] {
  return text
    .split('\n\n')
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const event = /^event: (.*)$/m.exec(chunk)?.[1] ?? '';
      const data = JSON.parse(/^data: (.*)$/m.exec(chunk)?.[1] ?? '{}');
      return { event, data };
    });
}

describe('scripted model over HTTP', () => {
  it('streams a text reply as a standard Messages SSE sequence', async () => {
    const { model, baseUrl } = await serve({
      script: [rule('hello', say('Hello there, world!'))],
      chunkSize: 5,
    });
    const res = await post(baseUrl, body([userText('hello')]));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = parseSse(await res.text());
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const e of events) expect(e.data.type).toBe(e.event);
    const text = events
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => (e.data.delta as { text: string }).text)
      .join('');
    expect(text).toBe('Hello there, world!');
    expect((events.at(-2)?.data.delta as { stop_reason: string } | undefined)?.stop_reason).toBe('end_turn');
    const [recorded] = model.requests;
    expect(recorded?.headers['x-api-key']).toBeUndefined();
    expect(recorded?.view).toMatchObject({ kind: 'main', userText: 'hello', step: 0 });
    expect(recorded?.answer).toMatchObject({ type: 'reply', stopReason: 'end_turn', completed: true });
  });

  it('answers stream:false with one JSON message, tool_use ids filled in', async () => {
    const { baseUrl } = await serve({ script: [rule('run', bash('ls', 'List'))] });
    const res = await post(baseUrl, body([userText('run it')], { stream: false }));
    const message = (await res.json()) as { stop_reason: string; content: { type: string; id?: string }[] };
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content[0]).toMatchObject({ type: 'tool_use', name: 'Bash', input: { command: 'ls' } });
    expect(message.content[0]?.id).toMatch(/^toolu_/);
  });

  it('moves to the next step after tool results, and after each served error (the CLI retries)', async () => {
    const { model, baseUrl } = await serve({
      script: [rule('go', overloaded(2), bash('ls'), rateLimited(3), say('finished'))],
    });
    const first = [userText('go')];
    expect((await post(baseUrl, body(first))).status).toBe(529);
    expect((await post(baseUrl, body(first))).status).toBe(529);
    const toolCall = parseSse(await (await post(baseUrl, body(first))).text());
    const toolUse = toolCall.find((e) => e.event === 'content_block_start')?.data.content_block as {
      id: string;
    };
    const afterTool = [
      ...first,
      { role: 'assistant', content: [{ type: 'tool_use', id: toolUse.id, name: 'Bash', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'a.txt' }] },
    ];
    const limited = await post(baseUrl, body(afterTool));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(await limited.json()).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'Scripted rate_limit_error' },
    });
    const done = parseSse(await (await post(baseUrl, body(afterTool))).text());
    expect(done.some((e) => (e.data.delta as { text?: string } | undefined)?.text === 'finished')).toBe(true);
    expect(model.messageRequests().map((r) => r.view?.step)).toEqual([0, 1, 2, 3, 4]);
    expect(model.messageRequests()[3]?.view?.toolResults).toEqual([
      { toolUseId: toolUse.id, text: 'a.txt', isError: false },
    ]);
  });

  it('answers side calls (no tools) without touching the script, and counts tokens', async () => {
    const { model, baseUrl } = await serve({ script: [rule('Hi', say('scripted turn'))] });
    const side = await post(
      baseUrl,
      body([userText('Hi')], { tools: undefined, stream: false, max_tokens: 1 }),
    );
    expect(((await side.json()) as { content: { text: string }[] }).content[0]?.text).toBe(
      'Scripted conversation',
    );
    const count = await post(baseUrl, body([userText('Hi')]), '/v1/messages/count_tokens');
    expect(((await count.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
    const other = await fetch(`${baseUrl}/v1/unknown`);
    expect(other.status).toBe(404);
    expect(model.requests.map((r) => r.answer?.type)).toEqual(['reply', 'other', 'other']);
    expect(model.requests[0]?.view?.kind).toBe('side');
  });

  it('keeps a hung request open until stop()', async () => {
    const { model, baseUrl } = await serve({ script: [rule('wait', hang())] });
    const pending = post(baseUrl, body([userText('wait')])).then(
      () => 'answered',
      () => 'closed',
    );
    await model.waitForRequest((r) => r.answer?.type === 'hang', { timeoutMs: 5_000 });
    const raced = await Promise.race([pending, new Promise((r) => setTimeout(() => r('still open'), 200))]);
    expect(raced).toBe('still open');
    await model.stop();
    expect(await pending).toBe('closed');
  });

  it('records a stream the client abandoned as not completed', async () => {
    const { model, baseUrl } = await serve({
      script: [rule('long', say('x'.repeat(200), { chunkSize: 1, chunkDelayMs: 10 }))],
    });
    const abort = new AbortController();
    const res = await fetch(`${baseUrl}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify(body([userText('long')])),
      signal: abort.signal,
    });
    const reader = res.body?.getReader();
    await reader?.read();
    abort.abort();
    await expect
      .poll(() => model.requests[0]?.answer, { timeout: 5_000 })
      .toMatchObject({ type: 'reply', completed: false });
  });
});

describe('the default (sandbox demo) script', () => {
  it('asks to write a file in the announced working directory, and echoes anything else', async () => {
    const { baseUrl } = await serve();
    const env = {
      role: 'system',
      content: [{ type: 'text', text: '# Environment\n - Primary working directory: /srv/agent\n' }],
    };
    const write = await post(baseUrl, body([userText('please write a file'), env], { stream: false }));
    expect(((await write.json()) as { content: unknown[] }).content).toEqual([
      expect.objectContaining({
        type: 'tool_use',
        name: 'Write',
        input: expect.objectContaining({ file_path: '/srv/agent/hello-from-switchyard.md' }),
      }),
    ]);
    const echo = await post(baseUrl, body([userText('good morning')], { stream: false }));
    expect(((await echo.json()) as { content: { text: string }[] }).content[0]?.text).toContain(
      '> good morning',
    );
  });

  it("echoes what the person typed, not the bridge's context header or file lines", async () => {
    const { baseUrl } = await serve();
    const typed =
      '[telegram chat=1 msg=2 from="Ada" inbound=in-1]\n[file: /var/lib/x/inbox/a.txt (a.txt, 3 bytes)]\nhi there';
    const echo = await post(baseUrl, body([userText(typed)], { stream: false }));
    const said = ((await echo.json()) as { content: { text: string }[] }).content[0]?.text ?? '';
    expect(said).toContain('> hi there');
    expect(said).not.toContain('[telegram');
    expect(said).not.toContain('[file:');
  });
});

describe('viewRequest', () => {
  it('takes a steer surfaced as a system message as the latest user text', () => {
    const view = viewRequest(
      body([
        userText('do the slow thing'),
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
        {
          role: 'system',
          content: [
            {
              type: 'text',
              text: 'The user sent a new message while you were working:\nalso this\n\nThis is how Claude Code surfaces messages …',
            },
          ],
        },
      ]),
    );
    expect(view).toMatchObject({ userText: 'also this', userTextSource: 'steer', repliesSoFar: 0 });
    expect(view?.toolResults).toEqual([{ toolUseId: 't1', text: 'ok', isError: false }]);
  });

  it('drops interrupt markers and slash-command echoes, and reads task notifications and sub-agents', () => {
    const afterModel = viewRequest(
      body([
        {
          role: 'user',
          content: [
            { type: 'text', text: '[Request interrupted by user]\n' },
            { type: 'text', text: '<local-command-stdout>Set model to x</local-command-stdout>\n' },
            { type: 'text', text: 'next question' },
          ],
        },
      ]),
    );
    expect(afterModel?.userText).toBe('next question');
    const notified = viewRequest(
      body([
        {
          role: 'user',
          content: [
            {
              type: 'text',
              text: '<system-reminder>\n<task-notification>\n<result>ok</result>\n</task-notification>\n</system-reminder>',
            },
          ],
        },
      ]),
    );
    expect(notified).toMatchObject({ userTextSource: 'task-notification' });
    expect(notified?.userText).toMatch(/^<task-notification>[\s\S]*<result>ok<\/result>/);
    const sub = viewRequest(
      body([userText('SUB: task')], {
        system: [
          { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.328; cc_is_subagent=true;' },
        ],
      }),
    );
    expect(sub?.kind).toBe('subagent');
  });
});
