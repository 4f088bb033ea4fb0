/**
 * The command table (`core/commands/commands.ts`) registered with Telegram's menu at boot, only when it
 * changed since the last registration this store remembers.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '@switchyard/protocol';
import { COMMANDS } from '../../core/commands/commands.js';
import type { GatewayStore } from '../../store/store.js';
import { type BotApi, errorText } from '../telegram/bot-api.js';

/** A stable fingerprint of the command table, so `setMyCommands` runs only when it changed. */
export function commandsFingerprint(): string {
  return createHash('sha256').update(JSON.stringify(COMMANDS)).digest('hex').slice(0, 16);
}

/**
 * Registers {@link COMMANDS} with Telegram unless the store says this table is registered already. A
 * failure is logged and retried at the next start, never fatal.
 */
export async function registerCommands(
  api: Pick<BotApi, 'setMyCommands'>,
  store: Pick<GatewayStore, 'getMeta' | 'setMeta'>,
  logger: Logger,
): Promise<void> {
  const fingerprint = commandsFingerprint();
  if (store.getMeta('commands') === fingerprint) return;
  try {
    await api.setMyCommands(COMMANDS.map((c) => ({ ...c })));
    store.setMeta('commands', fingerprint);
    logger.info({ event: 'commands_registered' }, 'bot commands registered');
  } catch (error) {
    logger.warn(
      { event: 'commands_failed', error: errorText(error) },
      'setMyCommands failed; will retry next start',
    );
  }
}
