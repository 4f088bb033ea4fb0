import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTelegramServer, type TelegramServer } from '../src/telegram/index.js';

let server: TelegramServer;
let apiRoot: string;

interface Reply {
  ok: boolean;
  result?: unknown;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number };
}

async function call(method: string, params: Record<string, unknown> = {}): Promise<Reply> {
  const res = await fetch(`${apiRoot}/bot${server.token}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
  });
  return (await res.json()) as Reply;
}

const TABLE = '# Plan\n\n| step | done |\n|:--|:--:|\n| **build** | yes |\n| test | no |';

beforeEach(async () => {
  server = createTelegramServer({ webView: false });
  ({ apiRoot } = await server.start());
});
afterEach(async () => {
  await server.stop();
});

describe('rich messages', () => {
  it('sends a rich message from Markdown and renders its table and heading', async () => {
    const chat = server.privateChat();
    const reply = await call('sendRichMessage', { chat_id: chat.id, rich_message: { markdown: TABLE } });
    expect(reply.ok).toBe(true);
    const [message] = server.messages(chat.id);
    expect(message).toMatchObject({ rich: true, text: TABLE });
    expect(message?.html).toContain('<h1>Plan</h1>');
    expect(message?.html).toContain('<th>step</th>');
    expect(message?.html).toContain('<td><b>build</b></td>');
  });

  it('renders task lists, code, quotes, details, spoilers and marked text', async () => {
    const chat = server.privateChat();
    const markdown = [
      '- [x] done',
      '- [ ] todo',
      '',
      '```ts\nconst a = 1 < 2;\n```',
      '',
      '> quoted',
      '',
      '<details><summary>More</summary>',
      '',
      'inside ||secret|| and ==hi==',
      '',
      '</details>',
    ].join('\n');
    expect((await call('sendRichMessage', { chat_id: chat.id, rich_message: { markdown } })).ok).toBe(true);
    const html = server.messages(chat.id)[0]?.html ?? '';
    expect(html).toContain('<input type="checkbox" disabled checked> done');
    expect(html).toContain('<pre><code class="language-ts">const a = 1 &lt; 2;</code></pre>');
    expect(html).toContain('<blockquote>quoted</blockquote>');
    expect(html).toContain('<details><summary>More</summary>');
    expect(html).toContain('<span class="spoiler">secret</span>');
    expect(html).toContain('<mark>hi</mark>');
  });

  it('refuses what Telegram refuses: unknown tags, an unclosed details, over 32,768 characters, 21 columns', async () => {
    const chat = server.privateChat();
    const send = (markdown: string) =>
      call('sendRichMessage', { chat_id: chat.id, rich_message: { markdown } });
    expect(await send('a Vec<String> here')).toMatchObject({
      ok: false,
      error_code: 400,
      description: "Bad Request: can't parse rich message: unsupported tag <String>",
    });
    expect((await send('<details><summary>x</summary>\n\nbody')).description).toMatch(/unclosed tag/);
    expect((await send('x'.repeat(32_769))).description).toBe('Bad Request: rich message is too long');
    expect((await send('x'.repeat(32_768))).ok).toBe(true);
    const wide = `|${' c |'.repeat(21)}\n|${' - |'.repeat(21)}`;
    expect((await send(wide)).description).toMatch(/too many columns/);
    expect((await send('escaped \\<String> is text')).ok).toBe(true);
  });

  it('edits a placeholder into a rich message, and says "not modified" for the same Markdown', async () => {
    const group = server.createGroup({ title: 'g' });
    const sent = (await call('sendMessage', { chat_id: group.id, text: '…' })).result as {
      message_id: number;
    };
    const edit = () =>
      call('editMessageText', {
        chat_id: group.id,
        message_id: sent.message_id,
        rich_message: { markdown: TABLE },
      });
    expect((await edit()).ok).toBe(true);
    expect(server.message(group.id, sent.message_id)).toMatchObject({ rich: true, text: TABLE });
    expect((await edit()).description).toMatch(/message is not modified/);
  });

  it('streams drafts with a stop button; the press reaches the bot as stopped_message_generation', async () => {
    const chat = server.privateChat();
    expect(
      (await call('sendMessageDraft', { chat_id: chat.id, draft_id: 5, text: '', can_stop: true })).ok,
    ).toBe(true);
    await new Promise((r) => setTimeout(r, 600));
    const rich = await call('sendRichMessageDraft', {
      chat_id: chat.id,
      draft_id: 5,
      rich_message: { markdown: '**partial**' },
      can_stop: true,
    });
    expect(rich.ok).toBe(true);
    expect(server.chat(chat.id).drafts.at(-1)).toMatchObject({
      rich: true,
      canStop: true,
      html: '<p><b>partial</b></p>',
    });
    server.stopDraft(chat.id);
    const updates = (await call('getUpdates', {})).result as Array<Record<string, unknown>>;
    expect(updates.at(-1)).toMatchObject({
      stopped_message_generation: { chat: { id: chat.id }, draft_id: 5 },
    });
    // A message of the bot ends the draft: no stop button is left to press.
    await call('sendRichMessage', { chat_id: chat.id, rich_message: { markdown: 'done' } });
    expect(() => server.stopDraft(chat.id)).toThrow(/no draft/);
  });

  it('limits drafts to two a second per chat, apart from the message budget', async () => {
    const chat = server.privateChat();
    const draft = (n: number) => call('sendMessageDraft', { chat_id: chat.id, draft_id: 1, text: `t${n}` });
    expect((await draft(1)).ok).toBe(true);
    expect((await draft(2)).ok).toBe(true);
    expect(await draft(3)).toMatchObject({ ok: false, error_code: 429 });
    // Messages have their own bucket.
    expect((await call('sendMessage', { chat_id: chat.id, text: 'm' })).ok).toBe(true);
    await new Promise((r) => setTimeout(r, 550));
    expect((await draft(4)).ok).toBe(true);
  });

  it('refuses rich drafts in groups', async () => {
    const group = server.createGroup({ title: 'g' });
    const reply = await call('sendRichMessageDraft', {
      chat_id: group.id,
      draft_id: 1,
      rich_message: { markdown: 'x' },
    });
    expect(reply).toMatchObject({ ok: false, error_code: 400 });
  });
});
