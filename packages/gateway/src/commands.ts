/**
 * The bot's commands: the table registered with Telegram, and parsing a message into a command with
 * validated arguments. Bad arguments come back as a reply that lists the valid ones. Executing a
 * command is the gateway's job; this module decides only what was asked.
 */
import { createHash } from 'node:crypto';
import { PERMISSION_MODES, type PermissionMode } from '@switchyard/protocol';

/** The commands shown in Telegram's menu, in order. */
export const COMMANDS = [
  { command: 'help', description: 'What this bot can do' },
  { command: 'stop', description: 'Interrupt the current turn' },
  { command: 'model', description: 'Show or set the model: /model [name]' },
  { command: 'mode', description: 'Show or set the permission mode: /mode [mode]' },
  { command: 'compact', description: 'Compact the conversation' },
  { command: 'clear', description: 'Start a new conversation' },
  { command: 'new', description: 'Start a new conversation (same as /clear)' },
  { command: 'status', description: 'Agent state, model, queue, pins' },
  { command: 'pins', description: 'List the pinned progress cards' },
  { command: 'restart', description: 'Restart the agent bridge' },
] as const satisfies readonly { command: string; description: string }[];

/** A parsed command, or the reply to give when it was malformed. */
export type Command =
  | { name: 'start' | 'help' | 'stop' | 'compact' | 'clear' | 'status' | 'pins' | 'restart' }
  | { name: 'model'; model: string | undefined }
  | { name: 'mode'; mode: PermissionMode | undefined }
  | { name: 'invalid'; reply: string };

/** Parses `/name[@bot] args`; undefined when the text is not a command of this bot. */
export function parseCommand(
  text: string,
  botUsername: string | undefined,
  models: readonly string[],
): Command | undefined {
  const match = /^\/([a-zA-Z0-9_]+)(?:@([a-zA-Z0-9_]+))?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  const [, rawName = '', target, rawArgs] = match;
  if (target && botUsername && target.toLowerCase() !== botUsername.toLowerCase()) return undefined;
  const name = rawName.toLowerCase();
  const args = (rawArgs ?? '').trim();
  switch (name) {
    case 'start':
    case 'help':
    case 'stop':
    case 'compact':
    case 'status':
    case 'pins':
    case 'restart':
      return args ? { name: 'invalid', reply: `/${name} takes no arguments.` } : { name };
    case 'clear':
    case 'new':
      return args ? { name: 'invalid', reply: `/${name} takes no arguments.` } : { name: 'clear' };
    case 'model': {
      if (!args) return { name: 'model', model: undefined };
      if (models.length === 0 || models.includes(args)) return { name: 'model', model: args };
      return { name: 'invalid', reply: `Unknown model "${args}". Valid models: ${models.join(', ')}.` };
    }
    case 'mode': {
      if (!args) return { name: 'mode', mode: undefined };
      const mode = PERMISSION_MODES.find((m) => m.toLowerCase() === args.toLowerCase());
      if (mode) return { name: 'mode', mode };
      return {
        name: 'invalid',
        reply: `Unknown mode "${args}". Valid modes: ${PERMISSION_MODES.join(', ')}.`,
      };
    }
    default:
      return {
        name: 'invalid',
        reply: `Unknown command /${name}. Commands: ${COMMANDS.map((c) => `/${c.command}`).join(' ')}.`,
      };
  }
}

/** The help text (plain). */
export function helpText(agent: string): string {
  return [
    `This is ${agent}, a Claude Code agent. Write to it and it answers; messages sent while it works are read at its next step.`,
    '',
    ...COMMANDS.map((c) => `/${c.command} — ${c.description}`),
  ].join('\n');
}

/** A stable fingerprint of the command table, so `setMyCommands` runs only when it changed. */
export function commandsFingerprint(): string {
  return createHash('sha256').update(JSON.stringify(COMMANDS)).digest('hex').slice(0, 16);
}
