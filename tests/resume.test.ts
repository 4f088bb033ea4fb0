/**
 * `/resume` end to end (gateway and bridge as real processes, the real CLI, the Telegram stand-in): a
 * session made at the "terminal" (the CLI run by hand in the agent's working directory, with the agent's
 * Claude config directory) is listed with its first words, continued from Telegram with its context — the
 * next model request holds the terminal's conversation — and refused while a terminal process holds it.
 */
import { rule, say } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, type System, systemPerTest } from './system.js';
import { bridgeConnected, openTerminal, runTerminal, sessionIdOf } from './terminal.js';

const startSystem = systemPerTest();
const settled = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 3500));

/** Starts both services, then asks `/resume` in the private chat; the list once it names `words`. */
async function resumeListAfterStart(system: System, words: string) {
  const { telegram, chatId } = system;
  system.start('gateway');
  system.start('bridge');
  await bridgeConnected(system);
  // A transcript written in the last few seconds may still be growing: the phone comes a moment later.
  await settled();
  telegram.sendText(chatId, '/resume');
  return telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text.includes(words)), {
    timeoutMs: 60_000,
  });
}

describe('/resume', () => {
  it('lists a terminal session by its first words and continues it from Telegram with its context', async () => {
    const system = await startSystem({
      rules: [
        rule('pelican', say('Noted: the word is pelican.')),
        rule('which word', say('It was pelican.')),
      ],
    });
    const { telegram, chatId } = system;
    const terminal = sessionIdOf(
      await runTerminal(system, 'remember the word pelican', ['--output-format', 'json']),
    );
    const list = await resumeListAfterStart(system, 'remember the word pelican');
    expect(list.text).toContain('Claude sessions in');
    expect(list.text).not.toContain('🔒');
    const button = list.replyMarkup?.inline_keyboard.flat().find((b) => b.text === '▶ 1');
    expect(button?.callback_data).toMatch(/^tm:/);
    telegram.pressButton(chatId, list.messageId, { text: '▶ 1' });
    await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text.includes(`now continues session ${terminal}`)),
      { timeoutMs: 60_000 },
    );
    const before = system.model.messageRequests().length;
    telegram.sendText(chatId, 'which word was it?');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'It was pelican.'), {
      timeoutMs: 90_000,
    });
    // The model call that answered holds the terminal's conversation: it is the same session, resumed.
    const next = system.model.messageRequests().slice(before);
    const body = JSON.stringify(next.at(-1)?.body);
    expect(body).toContain('remember the word pelican');
    expect(body).toContain('Noted: the word is pelican.');
    expect(body).toContain('which word was it?');
    expect(system.logs()).toContain(`"resume":"${terminal}"`);
  }, 180_000);

  it('refuses a session a live terminal process holds, naming the process', async () => {
    const system = await startSystem({ rules: [rule('heron', say('Noted: heron.'))] });
    const { telegram, chatId } = system;
    const id = sessionIdOf(await runTerminal(system, 'remember heron', ['--output-format', 'json']));
    const list = await resumeListAfterStart(system, 'remember heron');
    // Between the list and the press the developer opened the session again at the desk.
    const open = openTerminal(system, ['--resume', id]);
    try {
      await open.shown();
      telegram.pressButton(chatId, list.messageId, { text: '▶ 1' });
      const refused = await telegram.waitFor(
        () => botMessages(telegram, chatId).find((m) => m.text.includes('was not opened')),
        { timeoutMs: 60_000 },
      );
      expect(refused.text).toContain(`pid ${open.pid}`);
      // Listed again: marked with the process, and offered without a button.
      telegram.sendText(chatId, '/resume');
      const again = await telegram.waitFor(
        () =>
          botMessages(telegram, chatId).find(
            (m) => m.messageId > refused.messageId && m.text.includes('remember heron'),
          ),
        { timeoutMs: 60_000 },
      );
      expect(again.text).toContain(`pid ${open.pid}`);
      expect(again.replyMarkup?.inline_keyboard.flat().some((b) => b.text === '▶ 1') ?? false).toBe(false);
      // Nothing was started here on it.
      expect(system.claudePid(chatId)).toBeUndefined();
    } finally {
      await open.close();
    }
  }, 180_000);

  it('in a group lists no private chat’s session, and shows no first words or working directory (issue 27)', async () => {
    const system = await startSystem({
      rules: [rule('salary notes', say('Noted, privately.')), rule('terminal words', say('Done.'))],
    });
    const { telegram, chatId } = system;
    const terminal = sessionIdOf(await runTerminal(system, 'terminal words', ['--output-format', 'json']));
    system.start('gateway');
    system.start('bridge');
    await bridgeConnected(system);
    // The private chat's own session, made by the bridge: recorded as that conversation's.
    telegram.sendText(chatId, 'my salary notes');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Noted, privately.'), {
      timeoutMs: 90_000,
    });
    await settled();
    const group = telegram.createGroup({ title: 'team', supergroup: true });
    telegram.sendText(group.id, '/resume');
    const list = await telegram.waitFor(
      () => botMessages(telegram, group.id).find((m) => m.text.startsWith('Claude sessions')),
      { timeoutMs: 60_000 },
    );
    // Only the terminal's session, which no conversation recorded; without its words or the directory.
    expect(list.text).toContain('(1, newest first)');
    expect(list.text).not.toContain('salary');
    expect(list.text).not.toContain('terminal words');
    expect(list.text).not.toContain(system.dir);
    // The private chat still sees both, with their words.
    telegram.sendText(chatId, '/resume');
    const own = await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text.startsWith('Claude sessions')),
      { timeoutMs: 60_000 },
    );
    expect(own.text).toContain('(2, newest first)');
    expect(own.text).toContain('my salary notes');
    expect(own.text).toContain('terminal words');
    expect(terminal).toMatch(/^[0-9a-f-]{36}$/);
  }, 180_000);

  it('after /resume, a terminal `claude --continue` started later is noticed, as after /handoff (issue 27)', async () => {
    const system = await startSystem({
      rules: [rule('remember kestrel', say('Noted: kestrel.')), rule('from the phone', say('Hello again.'))],
    });
    const { telegram, chatId } = system;
    const terminal = sessionIdOf(await runTerminal(system, 'remember kestrel', ['--output-format', 'json']));
    const list = await resumeListAfterStart(system, 'remember kestrel');
    telegram.pressButton(chatId, list.messageId, { text: '▶ 1' });
    await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text.includes(`now continues session ${terminal}`)),
      { timeoutMs: 60_000 },
    );
    // Back at the desk, the developer continues the directory's last session: no session id on its line.
    const desk = openTerminal(system, ['--continue']);
    try {
      await desk.shown();
      telegram.sendText(chatId, 'hi from the phone');
      const waits = await telegram.waitFor(
        () => botMessages(telegram, chatId).find((m) => m.text.includes('still open elsewhere')),
        { timeoutMs: 60_000 },
      );
      expect(waits.text).toContain(`pid ${desk.pid}`);
      expect(system.claudePid(chatId)).toBeUndefined();
    } finally {
      await desk.close();
    }
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Hello again.'), {
      timeoutMs: 90_000,
    });
  }, 180_000);
});
