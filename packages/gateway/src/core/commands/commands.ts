/**
 * The bot's command table and its parsing, pure: what each command is called, what it says in
 * Telegram's menu, which arguments it takes, and the texts a malformed command is answered with. The
 * shell (`commands.ts`) registers the table with Telegram and runs a parsed {@link Command}.
 *
 * Contract: {@link parseCommand} is a pure function of the text, the bot's username and the models
 * allowed; a text that is not a command gives `undefined`, a malformed one `{ name: 'invalid', reply }`.
 */
import { PERMISSION_MODES, type PermissionMode } from '@switchyard/protocol/common';

/** How a command reads its arguments. */
type ArgumentRule = 'none' | 'title' | 'model' | 'mode';

/** One row of the table: its menu text (none: not in the menu), its arguments, and what it runs as. */
interface CommandRow {
  readonly description?: string;
  readonly args: ArgumentRule;
  /** Runs as another command (an alias). */
  readonly as?: string;
}

/** Every command the bot understands, in menu order; rows without a description are not in the menu. */
export const COMMAND_TABLE = {
  start: { args: 'none' },
  help: { description: 'What this bot can do', args: 'none' },
  stop: { description: 'Interrupt the current turn', args: 'none' },
  model: { description: 'Show or set the model: /model [name]', args: 'model' },
  mode: { description: 'Show or set the permission mode: /mode [mode]', args: 'mode' },
  compact: { description: 'Compact the conversation', args: 'none' },
  clear: { description: 'Start a new conversation', args: 'none' },
  new: {
    description: 'A fresh conversation: a new topic where the chat has topics, else as /clear',
    args: 'none',
  },
  status: { description: 'This conversation: state, model, queue, cost', args: 'none' },
  settings: {
    description: 'This conversation’s settings: replies, progress card, model, mode',
    args: 'none',
  },
  sessions: { description: 'The conversations of this chat, with stop and reset', args: 'none' },
  rename: { description: 'Name this conversation: /rename NAME', args: 'title' },
  pins: { description: 'List the pinned progress cards of this chat', args: 'none' },
  schedules: {
    description: 'The schedules of this conversation, with pause, resume and delete',
    args: 'none',
  },
  resume: {
    description: 'Continue a Claude session of this directory (one from the terminal)',
    args: 'none',
  },
  handoff: { description: 'Hand this conversation to the terminal (claude --resume)', args: 'none' },
  restart: { description: 'Restart the agent bridge', args: 'none' },
} as const satisfies Record<string, CommandRow>;

/** A command's name as typed. */
export type CommandName = keyof typeof COMMAND_TABLE;

/** The commands that take no arguments, as they run (an alias runs as its target). */
type PlainName = {
  [K in CommandName]: (typeof COMMAND_TABLE)[K]['args'] extends 'none'
    ? (typeof COMMAND_TABLE)[K] extends { as: infer A }
      ? A
      : K
    : never;
}[CommandName];

/** The commands shown in Telegram's menu, in order, as `setMyCommands` takes them. */
export const COMMANDS: readonly { command: string; description: string }[] = Object.entries(
  COMMAND_TABLE,
).flatMap(([command, row]) => ('description' in row ? [{ command, description: row.description }] : []));

/** A parsed command, or the reply to give when it was malformed. */
export type Command =
  | { name: PlainName }
  | { name: 'rename'; title: string }
  | { name: 'model'; model: string | undefined }
  | { name: 'mode'; mode: PermissionMode | undefined }
  | { name: 'invalid'; reply: string }
  /** Addressed to another bot (`/stop@otherbot` in a group): neither run nor passed to the agent. */
  | { name: 'ignored' };

/** Longest name `/rename` takes. */
const TITLE_LIMIT = 200;

const isCommandName = (name: string): name is CommandName => Object.hasOwn(COMMAND_TABLE, name);

/** Parses `/name[@bot] args`; undefined when the text is not a command at all. */
export function parseCommand(
  text: string,
  botUsername: string | undefined,
  models: readonly string[],
): Command | undefined {
  const match = /^\/([a-zA-Z0-9_]+)(?:@([a-zA-Z0-9_]+))?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  const [, rawName = '', target, rawArgs] = match;
  if (target && botUsername && target.toLowerCase() !== botUsername.toLowerCase()) return { name: 'ignored' };
  const name = rawName.toLowerCase();
  const args = (rawArgs ?? '').trim();
  if (!isCommandName(name)) {
    return {
      name: 'invalid',
      reply: `Unknown command /${name}. Commands: ${COMMANDS.map((c) => `/${c.command}`).join(' ')}.`,
    };
  }
  const row: CommandRow = COMMAND_TABLE[name];
  switch (row.args) {
    case 'none':
      return args
        ? { name: 'invalid', reply: `/${name} takes no arguments.` }
        : { name: (row.as ?? name) as PlainName };
    case 'title':
      if (!args) return { name: 'invalid', reply: 'Give the new name: /rename NAME.' };
      if (args.length > TITLE_LIMIT)
        return { name: 'invalid', reply: `A name is at most ${TITLE_LIMIT} characters.` };
      return { name: 'rename', title: args };
    case 'model':
      if (!args) return { name: 'model', model: undefined };
      if (models.length === 0 || models.includes(args)) return { name: 'model', model: args };
      return { name: 'invalid', reply: `Unknown model "${args}". Valid models: ${models.join(', ')}.` };
    case 'mode': {
      if (!args) return { name: 'mode', mode: undefined };
      const mode = PERMISSION_MODES.find((m) => m.toLowerCase() === args.toLowerCase());
      if (mode) return { name: 'mode', mode };
      return {
        name: 'invalid',
        reply: `Unknown mode "${args}". Valid modes: ${PERMISSION_MODES.join(', ')}.`,
      };
    }
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

/** Said when `/restart` has no way to restart the bridge. */
export const NO_RESTART =
  'Restarting is not available here: this gateway was started without a service manager or supervisor ' +
  '(run it with `switchyard run`, or under systemd).';

/** Appended to a command's acknowledgement while the bridge is away. */
export const QUEUED_NOTE =
  'The agent is restarting (bridge disconnected); this is queued and runs when it is back.';
