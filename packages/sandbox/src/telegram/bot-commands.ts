/**
 * The bot's command lists, one per scope key (scope type, chat, user, language), as `setMyCommands`
 * leaves them. Held by the chat store (`chat-store.ts`), which owns the sandbox's state; emits `commands`.
 */
import type { EventHub } from './events.js';
import type { WireBotCommand } from './wire.js';

/** The command lists of one sandbox's bot. */
export class BotCommands {
  readonly #hub: EventHub;
  readonly #commands = new Map<string, WireBotCommand[]>();

  constructor(hub: EventHub) {
    this.#hub = hub;
  }

  /** Replaces the command list for a scope key. Emits `commands`. */
  set(scope: string, commands: WireBotCommand[]): void {
    if (commands.length === 0) this.#commands.delete(scope);
    else this.#commands.set(scope, structuredClone(commands));
    this.#hub.emit({ type: 'commands', scope, commands: structuredClone(commands) });
  }

  /** The command list for a scope key (empty when none). */
  get(scope: string): WireBotCommand[] {
    return structuredClone(this.#commands.get(scope) ?? []);
  }
}
