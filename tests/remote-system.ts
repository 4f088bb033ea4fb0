/**
 * The steps the tests of a bridge on another host share: a system whose bridge reaches the gateway
 * through a test sshd (`system.ts`'s `remote`), started and answering its first message.
 */
import type { TestSshd } from './sshd.js';
import { botMessages, type System, type SystemOptions } from './system.js';

/** `SystemOptions.remote` for a bridge behind `sshd`. */
export function remoteOf(sshd: TestSshd): NonNullable<SystemOptions['remote']> {
  return { port: sshd.port, user: sshd.user, identityFile: sshd.identityFile, knownHosts: sshd.knownHosts };
}

/** Starts the gateway, the link and the bridge, sends `text`, and waits for `answer` in the chat. */
export async function startAndAsk(system: System, text: string, answer: string): Promise<void> {
  const { telegram, chatId } = system;
  system.start('gateway');
  system.start('link');
  system.start('bridge');
  telegram.sendText(chatId, text);
  await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === answer), {
    timeoutMs: 60_000,
  });
}
