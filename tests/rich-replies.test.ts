/**
 * Rich replies through the whole system (real `claude` CLI, scripted model, sandbox Telegram): a long
 * answer with a table is one rich message after drafts, the draft's stop button ends the turn and keeps
 * what was written, and a group's answer is sent with its first text and grows into the rich answer.
 */
import { rule, say } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, systemPerTest } from './system.js';

const BOT = '@switchyard_sandbox_bot';

/**
 * Waits until the gateway has the bridge: a message sent before that waits for it (after the start-up
 * grace it shows 👀; tested in the gateway's unit tests), which these tests do not want.
 */
async function bridgeConnected(system: { logs(): string }): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!/"event":"bridge_connection","connected":true/.test(system.logs())) {
    if (Date.now() > deadline) throw new Error('the bridge never connected');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A 6,000-character answer: a heading, a 40-row table, a task list, then prose. */
function tableAnswer(): string {
  const rows = Array.from({ length: 40 }, (_, i) => `| step ${i} | done |`).join('\n');
  const prose = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} ${'goes on and on '.repeat(12)}`).join(
    '\n\n',
  );
  const text = `# Report\n\n| step | state |\n|:--|:--:|\n${rows}\n\n- [x] built\n- [ ] shipped\n\n${prose}`;
  return `${text.slice(0, 5990).trimEnd()} The end.`;
}

describe('end to end: rich replies', () => {
  const startSystem = systemPerTest();

  it('a 6,000-character answer with a table arrives as exactly one rich message, after drafts', async () => {
    const answer = tableAnswer();
    const system = await startSystem({
      rules: [rule('report', say(answer))],
      chunkSize: 60,
      chunkDelayMs: 10,
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    await bridgeConnected(system);
    telegram.sendText(chatId, 'the report please');
    const final = await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.rich), {
      timeoutMs: 90_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(botMessages(telegram, chatId)).toHaveLength(1);
    expect(final.text.length).toBeGreaterThanOrEqual(answer.length);
    expect(final.text.startsWith('# Report')).toBe(true);
    expect(final.text.endsWith('The end.')).toBe(true);
    expect(final.html).toContain('<table>');
    expect(final.html).toContain('<input type="checkbox" disabled checked>');
    const drafts = telegram.chat(chatId).drafts;
    expect(drafts.some((d) => d.text === '' && d.canStop)).toBe(true);
    expect(drafts.some((d) => d.rich && d.text.includes('| step'))).toBe(true);
    expect(drafts.every((d) => d.at < final.date)).toBe(true);
    expect(telegram.messages(chatId).some((m) => m.text === '…')).toBe(false);
    expect(telegram.stats().tooManyRequests).toBe(0);
  }, 120_000);

  it('the draft’s stop button ends the turn, keeps the partial answer and starts nothing new', async () => {
    const endless = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
    const system = await startSystem({
      rules: [rule('ramble', say(endless))],
      chunkSize: 5,
      chunkDelayMs: 60,
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    await bridgeConnected(system);
    telegram.sendText(chatId, 'ramble on');
    await telegram.waitFor(() => telegram.chat(chatId).drafts.find((d) => d.text.includes('word3')), {
      timeoutMs: 60_000,
    });
    const requests = system.model.messageRequests().length;
    telegram.stopDraft(chatId);
    // keep_on_stop: the stopped draft stays on screen until the answer replaces it.
    const stopped = telegram.chat(chatId).drafts.find((d) => d.stoppedAt !== undefined);
    expect(stopped).toMatchObject({ keepOnStop: true });
    expect(stopped?.superseded).toBeUndefined();
    const final = await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.rich), {
      timeoutMs: 60_000,
    });
    expect(telegram.chat(chatId).drafts.find((d) => d.stoppedAt !== undefined)?.superseded).toBe(true);
    expect(final.text).toContain('word3');
    expect(final.text).not.toContain('word299');
    expect(final.text).toMatch(/Stopped/);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(system.model.messageRequests().length).toBe(requests);
    expect(botMessages(telegram, chatId).filter((m) => m.rich)).toHaveLength(1);
    // Said once, by the answer: no "Stopping…" before it and no "Done." after it.
    expect(botMessages(telegram, chatId).filter((m) => /^Stopping|^Done\.$/.test(m.text))).toEqual([]);
    expect(telegram.stats().tooManyRequests).toBe(0);
  }, 120_000);

  it('in a group, the answer’s first message is sent with its first text, edited into the rich answer, no "…"', async () => {
    const answer = `## Build\n\n| job | state |\n|--|--|\n| lint | green |\n| test | green |\n\n${'All good here. '.repeat(20)}`;
    const system = await startSystem({
      rules: [rule('build', say(answer))],
      // About 5 s of streaming, so that live edits go out between the first message and the final one.
      chunkSize: 10,
      chunkDelayMs: 150,
    });
    const { telegram } = system;
    const group = telegram.createGroup({ title: 'team', supergroup: true });
    system.start('gateway');
    system.start('bridge');
    await bridgeConnected(system);
    telegram.sendText(group.id, `${BOT} how is the build`);
    const final = await telegram.waitFor(
      () => botMessages(telegram, group.id).find((m) => m.rich && m.text.trim() === answer.trim()),
      { timeoutMs: 90_000 },
    );
    expect(final.html).toContain('<table>');
    expect(final.history.map((v) => v.text)).not.toContain('…');
    // The message it answers shows that it was read.
    const asked = telegram.messages(group.id).find((m) => m.from === 'user');
    await telegram.waitFor(
      () => (asked && telegram.message(group.id, asked.messageId)?.reactions.includes('👌')) || undefined,
    );
    expect(final.history.filter((v) => v.rich).length).toBeGreaterThanOrEqual(2);
    expect(botMessages(telegram, group.id)).toHaveLength(1);
    expect(telegram.stats().tooManyRequests).toBe(0);
  }, 120_000);
});
