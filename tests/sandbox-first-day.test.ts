/**
 * The chat half of the first day (issue 31), through `switchyard sandbox` as a real process with the
 * real CLI and the scripted model, as a newcomer tries the demos: `ask me` answers with the choice (not
 * the CLI's "Your questions have been answered … You can now continue"), a photo and a document are
 * echoed by what they are (no path in Claude's temporary directory, no empty quote), `think` shows its
 * thought on the progress card, the Write prompt keeps its long "Always allow (…)" on a row of its own,
 * and a picture the agent sends replies to the message that asked for it (a rich private turn has no
 * placeholder to find that message by).
 */
import { afterAll, expect, test } from 'vitest';
import {
  type SandboxProcess,
  startSandboxProcess,
  until,
  type ViewMessage,
  viewApi,
} from './sandbox-process.js';

const ANSWER_BUDGET_MS = 60_000;
let sandbox: SandboxProcess | undefined;

afterAll(async () => {
  await sandbox?.stop();
});

/** A 1x1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

/** What the view's state holds of a message beyond `ViewMessage`. */
type Shown = ViewMessage & {
  replyToMessageId?: number;
  replyMarkup?: { inline_keyboard: { text: string; callback_data?: string }[][] };
};

test('the demos answer in plain words, the card shows a thought, and the agent’s picture replies', async () => {
  sandbox = await startSandboxProcess({ timeoutMs: ANSWER_BUDGET_MS });
  const { origin, searchParams } = new URL(sandbox.url);
  const headers = { 'x-sandbox-view': searchParams.get('k') ?? '' };
  const api = viewApi(sandbox.url);
  const chatId = (await api.state()).chats[0]?.chat.id as number;
  const messages = async () =>
    ((await api.state()).chats.find((c) => c.chat.id === chatId)?.messages ?? []) as Shown[];
  const botAfter = async (id: number) =>
    (await messages()).filter((m) => m.from === 'bot' && m.messageId > id);
  const answer = (id: number, what: string, match: (m: Shown) => boolean) =>
    until(what, async () => (await botAfter(id)).find(match), ANSWER_BUDGET_MS);
  const press = (messageId: number, data: string) =>
    fetch(`${origin}/web/api/press`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ chatId, messageId, data }),
    });
  const upload = async (name: string, type: string, bytes: Uint8Array): Promise<number> => {
    const form = new FormData();
    form.set('chatId', String(chatId));
    form.set('caption', '');
    form.set('file', new Blob([Uint8Array.from(bytes)], { type }), name);
    const res = await fetch(`${origin}/web/api/upload`, { method: 'POST', headers, body: form });
    expect(res.status).toBe(200);
    return ((await res.json()) as { messageId: number }).messageId;
  };

  // `ask me`: the choice, in words.
  const ask = await api.send(chatId, 'ask me');
  const question = await answer(ask.messageId, 'the question', (m) =>
    (m.replyMarkup?.inline_keyboard.flat() ?? []).some((b) => b.text === 'Green'),
  );
  const green = question.replyMarkup?.inline_keyboard.flat().find((b) => b.text === 'Green');
  expect((await press(question.messageId, green?.callback_data ?? '')).status).toBe(200);
  const answered = await answer(ask.messageId, 'the answer to the question', (m) =>
    /You answered/.test(m.text),
  );
  // A rich message's text is its Markdown.
  expect(answered.text).toMatch(
    /You answered (\*\*)?Green(\*\*)? to “Which colour should the sandbox use\?”/,
  );
  expect(answered.text).not.toMatch(/have been answered|You can now continue/);

  // A photo and a document, echoed by what they are.
  const photo = await upload('sunset.png', 'image/png', PNG);
  const photoEcho = await answer(photo, 'the photo’s echo', (m) => /You s(ent|aid)/.test(m.text));
  expect(photoEcho.text).toMatch(/^You sent a picture\./);
  expect(photoEcho.text).not.toMatch(/\/tmp\/|Image: source/);
  const doc = await upload('notes.txt', 'text/plain', Buffer.from('some notes\n'));
  const docEcho = await answer(doc, 'the document’s echo', (m) => /You s(ent|aid)/.test(m.text));
  expect(docEcho.text).toMatch(/^You sent notes\.txt\./);

  // `think`: the progress card shows the thought while the answer streams.
  const think = await api.send(chatId, 'think');
  await answer(think.messageId, 'a card showing the thought', (m) => /💭 .*weigh two ways/.test(m.text));
  await answer(think.messageId, 'the answer after thinking', (m) => /A real model thinks/.test(m.text));

  // The Write prompt: no button that shares a row is longer than a phone shows whole.
  const write = await api.send(chatId, 'write a file');
  const prompt = await answer(write.messageId, 'the Write prompt', (m) =>
    /Claude wants to write/.test(m.text),
  );
  for (const row of prompt.replyMarkup?.inline_keyboard ?? [])
    if (row.length > 1) for (const button of row) expect(button.text.length).toBeLessThanOrEqual(16);
  const allow = prompt.replyMarkup?.inline_keyboard.flat().find((b) => b.text === '✅ Allow');
  expect((await press(prompt.messageId, allow?.callback_data ?? '')).status).toBe(200);
  await answer(write.messageId, 'the write done', (m) => /Done\. The tool said/.test(m.text));

  // The agent's picture replies to the message that asked for it.
  const picture = await api.send(chatId, 'send me a picture');
  const sent = await answer(picture.messageId, 'the agent’s picture', (m) => m.kind === 'photo');
  expect(sent.replyToMessageId).toBe(picture.messageId);

  const report = await sandbox.stop();
  sandbox = undefined;
  expect(report.leftovers).toEqual([]);
}, 300_000);
