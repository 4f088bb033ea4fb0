/**
 * The bot's commands: the table registered with Telegram (and registering it when it changed), parsing
 * a message into a command with validated arguments, and running a command against the bridge. Bad
 * arguments come back as a reply that lists the valid ones.
 */
import { createHash } from 'node:crypto';
import {
  assertNever,
  type Clock,
  DEFAULT_ALLOWED_MODES,
  describeError,
  type FrameOf,
  type GatewayToBridge,
  type Logger,
  PERMISSION_MODES,
  type PermissionMode,
  type Route,
  type SessionInfo,
  systemClock,
  type TimerHandle,
} from '@switchyard/protocol';
import { type BotApi, errorText } from './bot-api.js';
import type { GatewayStatus } from './options.js';
import { createSessionButtons, SESSION_BUTTON_EXPIRED, type SessionAction } from './session-buttons.js';
import type { GatewayStore, PinRow } from './store.js';

/** The commands shown in Telegram's menu, in order. */
export const COMMANDS = [
  { command: 'help', description: 'What this bot can do' },
  { command: 'stop', description: 'Interrupt the current turn' },
  { command: 'model', description: 'Show or set the model: /model [name]' },
  { command: 'mode', description: 'Show or set the permission mode: /mode [mode]' },
  { command: 'compact', description: 'Compact the conversation' },
  { command: 'clear', description: 'Start a new conversation' },
  { command: 'new', description: 'Start a new conversation (same as /clear)' },
  { command: 'status', description: 'This conversation: state, model, queue, cost' },
  { command: 'sessions', description: 'The conversations of this chat, with stop and reset' },
  { command: 'rename', description: 'Name this conversation: /rename NAME' },
  { command: 'pins', description: 'List the pinned progress cards of this chat' },
  { command: 'restart', description: 'Restart the agent bridge' },
] as const satisfies readonly { command: string; description: string }[];

/** A parsed command, or the reply to give when it was malformed. */
export type Command =
  | { name: 'start' | 'help' | 'stop' | 'compact' | 'clear' | 'status' | 'pins' | 'restart' | 'sessions' }
  | { name: 'rename'; title: string }
  | { name: 'model'; model: string | undefined }
  | { name: 'mode'; mode: PermissionMode | undefined }
  | { name: 'invalid'; reply: string }
  /** Addressed to another bot (`/stop@otherbot` in a group): neither run nor passed to the agent. */
  | { name: 'ignored' };

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
  switch (name) {
    case 'start':
    case 'help':
    case 'stop':
    case 'compact':
    case 'status':
    case 'pins':
    case 'restart':
    case 'sessions':
      return args ? { name: 'invalid', reply: `/${name} takes no arguments.` } : { name };
    case 'rename':
      if (!args) return { name: 'invalid', reply: 'Give the new name: /rename NAME.' };
      if (args.length > 200) return { name: 'invalid', reply: 'A name is at most 200 characters.' };
      return { name: 'rename', title: args };
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

/** Said when `/restart` has no way to restart the bridge. */
export const NO_RESTART =
  'Restarting is not available here: this gateway was started without a service manager or supervisor ' +
  '(run it with `switchyard run`, or under systemd).';

/** Appended to a command's acknowledgement while the bridge is away. */
export const QUEUED_NOTE =
  'The agent is restarting (bridge disconnected); this is queued and runs when it is back.';

/** What executing commands needs from the gateway. */
export interface CommandRunnerOptions {
  agent: string;
  /** Models `/model` accepts; empty accepts any. */
  models: readonly string[];
  /** Modes `/mode` may switch to (the operator's `allowedModes`; default all but bypassPermissions). */
  allowedModes?: readonly PermissionMode[] | undefined;
  /** Queues a plain reply in the chat's courier lane; never awaited, so a handler never waits on the budget. */
  reply(route: Route, text: string): void;
  /** Like `reply`, with inline buttons under the text. */
  replyWithButtons(route: Route, text: string, buttons: InlineButton[][]): void;
  /** Hands a frame to the bridge (reliable ones are durable when it resolves). */
  send(frame: GatewayToBridge): Promise<void>;
  connected(): boolean;
  /** The gateway's view, narrowed to one conversation when `route` is given. */
  status(route?: Route): GatewayStatus;
  listPins(): PinRow[];
  /**
   * Users who see every conversation's `/sessions` and `/pins`, in their private chat with the bot only
   * (in a group the members read along). Everyone else sees the chat the command is sent in.
   */
  operators?: readonly number[];
  restartBridge?: (() => Promise<void>) | undefined;
  /**
   * Where a command waiting for its `command_result` answers to, kept durably (the gateway's SQLite):
   * the bridge may answer after a gateway restart, and the result must still reach the chat.
   */
  routes: {
    add(commandId: string, route: Route): void;
    /** The route, forgotten as it is read (a result is said once). */
    take(commandId: string): Route | undefined;
  };
  logger: Logger;
  /** How long `/status` waits for the bridge's answer before replying from what the gateway knows. */
  statusTimeoutMs?: number;
  /** The model is a stand-in (the sandbox's scripted model): `/status` labels its model and cost. */
  simulatedModel?: boolean;
  /** Time for the answer timers, the command ids and the `/sessions` buttons; default the system clock. */
  clock?: Clock;
}

/** Executes commands and routes the bridge's answers back to the chat that asked. */
export interface CommandRunner {
  /**
   * Runs a parsed command sent by user `from`; resolves once its frame is queued for the bridge (never
   * waits for the agent).
   */
  run(command: Command, route: Route, from?: number): Promise<void>;
  /** A `command_result`, a `status` or `sessions` that may answer a command; replies in the asking chat. */
  answer(frame: FrameOf<'command_result' | 'status' | 'sessions'>): void;
  /**
   * A press on a `/sessions` button (callback data starting with `ss:`, see `session-buttons.ts`) in
   * chat `from`: queues its command and returns the text to answer the press with. A token that is
   * unknown, expired or from another chat's list does nothing and says the button expired.
   */
  press(data: string, from: Route): Promise<string | undefined>;
  /** Drops pending `/status` timers; for shutdown. */
  stop(): void;
}

/** An inline button: its label and callback data. */
export interface InlineButton {
  text: string;
  callback_data: string;
}

/**
 * The `/status` text for one conversation: its state, model, mode, turn, queue and cost (from the
 * bridge's answer when there is one), then the agent's bridge, polling, last error, prompts and pins.
 */
export function statusText(
  s: GatewayStatus,
  conversation?: FrameOf<'status'>,
  costUsd?: number,
  simulated = false,
): string {
  const turns = s.runningTurns.map((t) => t.turnId).join(', ') || 'none';
  const state = conversation?.state ?? s.agentState;
  const model = conversation?.model ?? s.model;
  const mode = conversation?.mode ?? s.mode;
  return [
    `Conversation: ${state === undefined ? 'unknown' : state === 'exited' ? 'no Claude process (resumes at your next message)' : state}`,
    ...(costUsd !== undefined
      ? [`Cost so far: ${formatUsd(costUsd)}${simulated ? ' (simulated: nothing was spent)' : ''}`]
      : []),
    `Bridge: ${s.bridgeConnected ? 'connected' : 'disconnected (restarting?)'}`,
    `Model: ${model ?? 'unknown'}${simulated ? ' (simulated by the scripted model)' : ''} · Mode: ${mode ?? 'unknown'}`,
    `Current turn: ${turns}`,
    `Queue: ${s.inbox} message(s) waiting for the agent`,
    `Open prompts: ${s.openPrompts} · Pinned cards: ${s.pins}`,
    `Telegram polling: ${s.polling.ok ? 'ok' : `failing (${s.polling.error ?? 'unknown'})`}`,
    `Last error: ${s.lastError === undefined ? 'none' : cutError(s.lastError)}`,
  ].join('\n');
}

/** How much of an error `/status` shows: a glance; the log has it whole. */
const ERROR_CHARS = 500;
const cutError = (text: string): string =>
  text.length > ERROR_CHARS ? `${Array.from(text.slice(0, ERROR_CHARS)).slice(0, -1).join('')}…` : text;

/** Dollars as the chat shows them. */
export function formatUsd(usd: number): string {
  return `$${usd.toFixed(usd < 1 ? 3 : 2)}`;
}

/** A conversation's label in `/sessions`: its name, or where it is. */
function sessionLabel(info: SessionInfo): string {
  if (info.name) return info.name;
  const where = info.route.chatId > 0 ? `private chat ${info.route.chatId}` : `chat ${info.route.chatId}`;
  return info.route.threadId === undefined ? where : `${where}, topic ${info.route.threadId}`;
}

/**
 * The `/sessions` list: one line per conversation, most recently active first, with stop/reset buttons
 * whose callback data `button` makes (a server-side token).
 */
export function sessionsView(
  sessions: readonly SessionInfo[],
  button: (action: SessionAction, route: Route) => string,
): { text: string; buttons: InlineButton[][] } {
  if (sessions.length === 0) return { text: 'No conversations yet.', buttons: [] };
  const sorted = [...sessions].sort((a, b) => (b.lastActiveAt ?? 0) - (a.lastActiveAt ?? 0)).slice(0, 20);
  const lines = sorted.map((info, index) => {
    const parts = [
      info.live ? `live, ${info.state}` : 'idle (no process)',
      ...(info.turnId ? ['turn running'] : []),
      ...(info.queued > 0 ? [`${info.queued} queued`] : []),
      formatUsd(info.costUsd),
    ];
    return `${index + 1}. ${sessionLabel(info)} — ${parts.join(' · ')}`;
  });
  const buttons = sorted.map((info, index) => [
    { text: `⏹ Stop ${index + 1}`, callback_data: button('stop', info.route) },
    { text: `♻️ Reset ${index + 1}`, callback_data: button('reset', info.route) },
  ]);
  const more = sessions.length > sorted.length ? [`…and ${sessions.length - sorted.length} more`] : [];
  return {
    text: [
      `${sessions.length} conversation(s):`,
      ...lines,
      ...more,
      '',
      'Stop ends a conversation’s Claude process (its next message resumes it); Reset starts it anew.',
    ].join('\n'),
    buttons,
  };
}

/** How many recent exchanges `/status` shows, and how much of each. */
const HISTORY_SHOWN = 6;
const HISTORY_CHARS = 160;

/**
 * The bridge's recent exchanges (from Claude's transcript) as plain lines, newest last; empty when it
 * sent none. Each is cut to one short line: `/status` is a glance, not the conversation.
 */
export function historyText(history: FrameOf<'status'>['history']): string {
  if (!history || history.length === 0) return '';
  const lines = history.slice(-HISTORY_SHOWN).map((entry) => {
    const who = entry.role === 'user' ? '👤' : '🤖';
    const time = new Date(entry.at).toISOString().slice(11, 16);
    const flat = entry.text.replace(/\s+/g, ' ').trim();
    const cut = flat.length > HISTORY_CHARS ? `${flat.slice(0, HISTORY_CHARS - 1)}…` : flat;
    return `${time} ${who} ${cut}`;
  });
  return ['Recently (UTC):', ...lines].join('\n');
}

/**
 * Creates the command runner. Routes of commands sent to the bridge as reliable frames are durable
 * (`options.routes`), so a `command_result` after a gateway restart still reaches its chat. `/status`
 * is different: its request is not a reliable frame (it dies with the connection), so its route and
 * fallback timer live in memory, and a restart drops them with the request.
 */
export function createCommandRunner(options: CommandRunnerOptions): CommandRunner {
  const { reply, logger } = options;
  const operators = new Set(options.operators ?? []);
  /** Whether user `from` sees every conversation here: an operator, in their own private chat. */
  const seesAll = (route: Route, from: number | undefined): boolean =>
    from !== undefined && operators.has(from) && route.chatId === from;
  const clock = options.clock ?? systemClock;
  const sessionButtons = createSessionButtons(() => clock.now());
  /** Requests answered in memory (`/status`, `/sessions`): not reliable frames, so not kept durably. */
  const statusRoutes = new Map<string, Route>();
  /** `/sessions` requests whose answer lists every conversation (see `seesAll`); leave with their route. */
  const listsAll = new Set<string>();
  const statusTimers = new Map<string, TimerHandle>();
  /**
   * Waits for the answer to a request that is not a reliable frame (`/status`, `/sessions`: it dies with
   * the connection), in memory: `onTimeout` speaks instead when none comes in time.
   */
  const awaitAnswer = (commandId: string, route: Route, onTimeout: () => void): void => {
    statusRoutes.set(commandId, route);
    statusTimers.set(
      commandId,
      clock.setTimeout(() => {
        statusTimers.delete(commandId);
        if (statusRoutes.delete(commandId)) onTimeout();
      }, options.statusTimeoutMs ?? 3000),
    );
  };
  const newId = (): string => `cmd-${clock.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

  /**
   * Interrupts whose success goes unsaid: the stopped turn's own reply ends "⏹ Stopped.", so an
   * acknowledgement and a "Done." would say it three times. An entry leaves with its result (in memory:
   * a result after a gateway restart is said, as any other).
   */
  const quietOnSuccess = new Set<string>();
  const toBridge = async (
    frame: GatewayToBridge & { commandId: string },
    route: Route,
    ack: string,
    { quiet = false }: { quiet?: boolean } = {},
  ) => {
    // Recorded before the frame is queued: a result can never arrive for a command with no route.
    options.routes.add(frame.commandId, route);
    if (quiet) quietOnSuccess.add(frame.commandId);
    // The acknowledgement is queued first, so the result can never overtake it in the chat. A quiet
    // command is acknowledged only when it has to wait for the bridge.
    if (!options.connected()) reply(route, `${ack}\n${QUEUED_NOTE}`);
    else if (!quiet) reply(route, ack);
    await options.send(frame);
  };

  return {
    async run(command, route, from) {
      const commandId = newId();
      switch (command.name) {
        case 'start':
        case 'help':
          reply(route, helpText(options.agent));
          return;
        case 'invalid':
          reply(route, command.reply);
          return;
        case 'ignored':
          return;
        case 'stop':
          return toBridge({ type: 'interrupt', commandId, route }, route, 'Stopping…', { quiet: true });
        case 'compact':
          return toBridge({ type: 'compact', commandId, route }, route, 'Compacting…');
        case 'clear':
          return toBridge({ type: 'clear', commandId, route }, route, 'Starting a new conversation…');
        case 'model':
          if (!command.model) {
            reply(
              route,
              `Model: ${options.status().model ?? 'unknown'}. Valid models: ${options.models.join(', ') || 'any name'}. Use /model <name>.`,
            );
            return;
          }
          return toBridge(
            { type: 'set_model', commandId, route, model: command.model },
            route,
            `Switching to ${command.model}…`,
          );
        case 'mode': {
          const allowed = options.allowedModes ?? DEFAULT_ALLOWED_MODES;
          if (!command.mode) {
            reply(
              route,
              `Mode: ${options.status().mode ?? 'unknown'}. Allowed modes: ${allowed.join(', ')}. Use /mode <mode>.`,
            );
            return;
          }
          if (!allowed.includes(command.mode)) {
            reply(
              route,
              `Mode ${command.mode} is not allowed for this agent. Allowed modes: ${allowed.join(', ')}.`,
            );
            return;
          }
          return toBridge(
            { type: 'set_mode', commandId, route, mode: command.mode },
            route,
            `Switching to ${command.mode} mode…`,
          );
        }
        case 'status': {
          if (!options.connected()) {
            reply(route, statusText(options.status(route), undefined, undefined, options.simulatedModel));
            return;
          }
          // If the bridge does not answer, answer from what the gateway knows.
          awaitAnswer(commandId, route, () =>
            reply(
              route,
              `${statusText(options.status(route), undefined, undefined, options.simulatedModel)}\n(the agent did not answer; this is the gateway's view)`,
            ),
          );
          await options.send({ type: 'status_request', commandId, route });
          return;
        }
        case 'sessions': {
          if (!options.connected()) {
            reply(route, 'The agent is restarting (bridge disconnected); try /sessions again in a moment.');
            return;
          }
          if (seesAll(route, from)) listsAll.add(commandId);
          awaitAnswer(commandId, route, () => {
            listsAll.delete(commandId);
            reply(route, 'The agent did not answer; try again.');
          });
          await options.send({ type: 'sessions_request', commandId });
          return;
        }
        case 'rename':
          return toBridge(
            { type: 'rename', commandId, route, name: command.title },
            route,
            `Renaming this conversation…`,
          );
        case 'pins': {
          const all = options.listPins();
          const pins = seesAll(route, from) ? all : all.filter((p) => p.chatId === route.chatId);
          reply(
            route,
            pins.length === 0
              ? 'No pinned cards.'
              : [
                  `${pins.length} pinned card(s):`,
                  ...pins.map((p) => `chat ${p.chatId} · message ${p.messageId} · turn ${p.turnId}`),
                ].join('\n'),
          );
          return;
        }
        case 'restart': {
          const restart = options.restartBridge;
          if (!restart) {
            reply(route, NO_RESTART);
            return;
          }
          reply(route, 'Restarting the agent bridge…');
          // Not awaited: a service manager may take seconds, and this chat's other updates must not wait.
          void restart().then(
            () => reply(route, 'The agent bridge was restarted.'),
            (error: unknown) => {
              logger.error({ event: 'restart_failed', error: describeError(error) }, 'bridge restart failed');
              reply(route, 'The restart failed; the operator can find why in the gateway log.');
            },
          );
          return;
        }
        default:
          assertNever(command);
      }
    },

    answer(frame) {
      if (frame.commandId === undefined) return;
      if (frame.type === 'command_result') {
        const route = options.routes.take(frame.commandId);
        const quiet = quietOnSuccess.delete(frame.commandId) && frame.ok && frame.message === undefined;
        if (quiet) return;
        if (route) reply(route, frame.message ?? (frame.ok ? 'Done.' : 'That did not work.'));
        else
          logger.info({ event: 'command_result_unrouted', command: frame.commandId }, 'no chat waits for it');
        return;
      }
      const route = statusRoutes.get(frame.commandId);
      if (!route) return;
      statusRoutes.delete(frame.commandId);
      const timer = statusTimers.get(frame.commandId);
      clock.clearTimeout(timer);
      statusTimers.delete(frame.commandId);
      if (frame.type === 'sessions') {
        const all = listsAll.delete(frame.commandId);
        const shown = all ? frame.sessions : frame.sessions.filter((s) => s.route.chatId === route.chatId);
        const view = sessionsView(shown, (action, target) => sessionButtons.issue(action, target, route));
        options.replyWithButtons(route, view.text, view.buttons);
        return;
      }
      reply(
        route,
        [
          statusText(options.status(route), frame, frame.costUsd, options.simulatedModel),
          historyText(frame.history),
        ]
          .filter(Boolean)
          .join('\n\n'),
      );
    },

    async press(data, from) {
      const parsed = sessionButtons.resolve(data, from);
      if (!parsed) return SESSION_BUTTON_EXPIRED;
      const commandId = newId();
      if (parsed.action === 'stop') {
        await toBridge(
          { type: 'stop_session', commandId, route: parsed.route },
          from,
          'Stopping that conversation…',
        );
      } else {
        await toBridge(
          { type: 'clear', commandId, route: parsed.route },
          from,
          'Resetting that conversation…',
        );
      }
      return parsed.action === 'stop' ? 'Stopping…' : 'Resetting…';
    },

    stop() {
      for (const timer of statusTimers.values()) clock.clearTimeout(timer);
      statusTimers.clear();
    },
  };
}
