/**
 * A webhook's turn runs in a session of its own (issue 27), with the real CLI: the chat runs in
 * `acceptEdits` and its user pressed "Always allow" for a command there; a pull request's delivery then
 * reaches a conversation of the hook's own — another Claude process and session, started in `default`
 * mode, whose model request carries none of the chat's messages — and the same command prompts again
 * there, since the chat's rule is not its. Today the delivery ran in the chat's session, mode and rules.
 */
import { readlinkSync } from 'node:fs';
import { request } from 'node:http';
import { conversationDir } from '@switchyard/agent-bridge';
import { conversationKey, type Route } from '@switchyard/protocol';
import { bash, rule, say } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { signBody } from '../packages/gateway/src/io/automation/signature.js';
import { processesOf } from './processes.js';
import { botMessages, systemPerTest } from './system.js';

const SECRET = 'e2e webhook secret';
/** A command the CLI asks about (a network call; a read-only one like `date` needs no prompt). */
const PROBE = 'curl -sS http://127.0.0.1:9/ || true';
/** A fixed port outside the kernel's ephemeral range (see `webhooks.test.ts`), unlike its ports. */
const PORT = 18_000 + (process.pid % 1000);

function post(path: string, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: PORT, path, method: 'POST', headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

type Shown = { text: string; messageId: number; replyMarkup?: { inline_keyboard: { text: string }[][] } };
const buttonsOf = (m: Shown): string[] => m.replyMarkup?.inline_keyboard.flat().map((b) => b.text) ?? [];
const prompts = (messages: Shown[]): Shown[] => messages.filter((m) => buttonsOf(m).includes('✅ Allow'));

describe('end to end: a webhook runs in its own session', () => {
  const startSystem = systemPerTest();

  it('in its own session and mode, with none of the chat’s "always allow" rules', async () => {
    const system = await startSystem({
      rules: [
        rule('show me the date', bash(PROBE, 'Probe a port'), say('Shown.')),
        rule(/GitHub event pull_request/, bash(PROBE, 'Probe a port'), say('Webhook turn done.')),
      ],
      agent: (telegram) => ({
        chats: [{ chat: telegram.privateChat().id, permissionMode: 'acceptEdits' }],
        webhooks: {
          listen: { host: '127.0.0.1', port: PORT },
          hooks: [
            {
              name: 'github',
              kind: 'github',
              secret: SECRET,
              chat: telegram.privateChat().id,
              events: ['pull_request'],
            },
          ],
        },
      }),
    });
    const { telegram, chatId } = system;
    const messages = () => botMessages(telegram, chatId) as Shown[];
    system.start('gateway');
    system.start('bridge');

    // The chat: a prompt for a command, answered "Always allow"; the next one there does not ask.
    telegram.sendText(chatId, 'show me the date');
    const first = await telegram.waitFor(() => prompts(messages())[0], { timeoutMs: 90_000 });
    const always = buttonsOf(first).find((b) => b.startsWith('♾ Always allow'));
    expect(always).toBeDefined();
    telegram.pressButton(chatId, first.messageId, { text: always ?? '' });
    await telegram.waitFor(() => messages().find((m) => m.text === 'Shown.'), { timeoutMs: 60_000 });
    telegram.sendText(chatId, 'show me the date once more');
    await telegram.waitFor(() => messages().filter((m) => m.text === 'Shown.')[1], { timeoutMs: 60_000 });
    // No other prompt (the first one's buttons are gone once it was answered).
    expect(prompts(messages()).filter((m) => m.messageId !== first.messageId)).toEqual([]);

    // A pull request's delivery: the hook's own conversation asks again for the same command.
    const body = JSON.stringify({
      action: 'opened',
      repository: { full_name: 'acme/app' },
      pull_request: { number: 7, title: 'Add a thing', user: { login: 'mallory' } },
    });
    const headers = {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-github-delivery': 'delivery-pr',
      'x-hub-signature-256': signBody(SECRET, body),
    };
    const until = Date.now() + 60_000;
    while ((await post('/hooks/github', body, headers)) !== 202) {
      if (Date.now() > until) throw new Error('the webhook receiver did not take the delivery');
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const second = await telegram.waitFor(
      () => prompts(messages()).find((m) => m.messageId !== first.messageId),
      { timeoutMs: 90_000 },
    );
    expect(second.text).toContain('curl');
    telegram.pressButton(chatId, second.messageId, { text: '⛔ Deny' });
    await telegram.waitFor(() => messages().find((m) => m.text === 'Webhook turn done.'), {
      timeoutMs: 60_000,
    });

    // Its model request holds the delivery and none of the chat's messages: another session.
    const run = system.model
      .messageRequests()
      .find((r) => (r.view?.userText ?? '').includes('GitHub event pull_request'));
    expect(JSON.stringify(run?.body)).not.toContain('show me the date');

    // Two Claude processes: the chat's in acceptEdits, the hook's in default (the operator's automation mode).
    const commandOf = (route: Route) => {
      const fifo = `/${conversationDir(conversationKey(route))}/stdin.fifo`;
      const found = processesOf(system.dir).find((p) => {
        try {
          return p.command.includes('--input-format') && readlinkSync(`/proc/${p.pid}/fd/0`).endsWith(fifo);
        } catch {
          return false;
        }
      });
      return found?.command ?? '';
    };
    expect(commandOf({ chatId })).toContain('--permission-mode acceptEdits');
    expect(commandOf({ chatId, lane: 'webhook-github' })).toContain('--permission-mode default');

    // `/sessions` lists the hook's conversation, marked.
    telegram.sendText(chatId, '/sessions');
    const list = await telegram.waitFor(() => messages().find((m) => m.text.includes('conversation(s):')), {
      timeoutMs: 30_000,
    });
    expect(list.text).toMatch(/webhook-github — .*⚠ reads untrusted input/);
  }, 240_000);
});
