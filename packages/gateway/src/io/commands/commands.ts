/**
 * The bot's commands, as a shell over the pure table (`core/commands/commands.ts`: names, menu, parsing) and
 * texts (`core/commands/command-texts.ts`): running a parsed command against the bridge and the chat
 * (registering the table with Telegram is `command-registration.ts`).
 *
 * Longer than 400 lines because it is one switch over the command table, each case a few lines of the same
 * shape (say it, or hand the bridge its frame with the route and the caller's commit), plus the
 * answers' side: split by command, the one transaction every command shares would be read across files.
 * A command family that grows its own state and buttons leaves, as `/resume` and `/handoff` did
 * (`terminal-commands.ts`) and `/schedules` (`io/automation/schedules.ts`).
 */
import {
  assertNever,
  type Clock,
  DEFAULT_ALLOWED_MODES,
  describeError,
  type FrameOf,
  type GatewayToBridge,
  type Logger,
  type PermissionMode,
  type Route,
  systemClock,
  type TimerHandle,
} from '@switchyard/protocol';
import {
  historyText,
  type InlineButton,
  sessionsView,
  statusText,
} from '../../core/commands/command-texts.js';
import { type Command, helpText, NO_RESTART, QUEUED_NOTE } from '../../core/commands/commands.js';
import { markdownToRuns, runsToText } from '../../core/text/markdown.js';
import type { GatewayStatus } from '../../options.js';
import type { PinRow } from '../../store/store.js';
import { SCHEDULE_BUTTON_PREFIX, type Schedules } from '../automation/schedules.js';
import type { SpendLedger } from '../spend/spend-ledger.js';
import { errorText } from '../telegram/bot-api.js';
import { createSessionButtons, SESSION_BUTTON_EXPIRED } from './session-buttons.js';
import type { TerminalCommands } from './terminal-commands.js';
import type { TopicOpener } from './topic-opener.js';

/** A request's route and, for `/status` (answered to the asker alone in a group), who asked. */
type Asked = Route & { to?: number | undefined };

/** What executing commands needs from the gateway. */
export interface CommandRunnerOptions {
  agent: string;
  /** Models `/model` accepts; empty accepts any. */
  models: readonly string[];
  /** Modes `/mode` may switch to (the operator's `allowedModes`; default all but bypassPermissions). */
  allowedModes?: readonly PermissionMode[] | undefined;
  /** Queues a plain reply in the chat's courier lane (never awaited); `to`: for that member alone. */
  reply(route: Route, text: string, to?: number): void;
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
  /** `/settings`: sends the conversation's settings panel (`io/settings/settings-panel.ts`). */
  settings?: { show(route: Route): void } | undefined;
  /** `/new` in a private chat with topics opens a topic (`topic-opener.ts`); without it `/new` is `/clear`. */
  topics?: TopicOpener | undefined;
  /** `/schedules` and its buttons (`io/automation/schedules.ts`). */
  schedules?: Pick<Schedules, 'show' | 'press'>;
  /**
   * Where a command waiting for its `command_result` answers to, kept durably (the gateway's SQLite):
   * the bridge may answer after a gateway restart, and the result must still reach the chat.
   */
  routes: {
    add(commandId: string, route: Route): void;
    /** The route, forgotten as it is read (a result is said once). */
    take(commandId: string): Route | undefined;
  };
  /** Runs `fn` as one store transaction: a command's route row, its frame and the caller's commit. */
  atomically<T>(fn: () => T): T;
  logger: Logger;
  /** How long `/status` waits for the bridge's answer before replying from what the gateway knows. */
  statusTimeoutMs?: number;
  /** The model is a stand-in (the sandbox's scripted model): `/status` labels its model and cost. */
  simulatedModel?: boolean;
  /** Time for the answer timers, the command ids and the `/sessions` buttons; default the system clock. */
  clock?: Clock;
  /** `/resume`, `/handoff` and the `/sessions` worktree buttons (`terminal-commands.ts`). */
  terminal?: Pick<TerminalCommands, 'run' | 'owns' | 'press' | 'sessionButtons' | 'stop'> | undefined;
  /** The daily budgets: `/compact` runs the model, so it is admitted as a turn is (`io/spend/spend-ledger.ts`). */
  spend?: Pick<SpendLedger, 'admitCommand'> | undefined;
}

/** Executes commands and routes the bridge's answers back to the chat that asked. */
export interface CommandRunner {
  /**
   * Runs a parsed command sent by user `from`; resolves once its frame is queued for the bridge (never
   * waits for the agent). A command for the bridge calls `commit` inside the one transaction that keeps
   * its route and queues its frame (so the caller's "update handled" mark is part of it: a crash neither
   * runs the command twice nor loses it); a command with nothing durable does not call it.
   */
  run(command: Command, route: Route, from?: number, commit?: () => void): Promise<void>;
  /** A `command_result`, a `status` or `sessions` that may answer a command; replies in the asking chat. */
  answer(frame: FrameOf<'command_result' | 'status' | 'sessions'>): void;
  /**
   * A press on a `/sessions` button (callback data starting with `ss:`, see `session-buttons.ts`)
   * in chat `from`: queues its command and returns the text to answer the press with. A token that is
   * unknown, expired or from another chat's list does nothing and says the button expired.
   */
  press(data: string, from: Route, commit?: () => void, by?: number): Promise<string | undefined>;
  /** Drops pending `/status` timers; for shutdown. */
  stop(): void;
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
  const statusRoutes = new Map<string, Asked>();
  /** `/sessions` requests whose answer lists every conversation (see `seesAll`); leave with their route. */
  const listsAll = new Set<string>();
  const statusTimers = new Map<string, TimerHandle>();
  /**
   * Waits for the answer to a request that is not a reliable frame (`/status`, `/sessions`: it dies with
   * the connection), in memory: `onTimeout` speaks instead when none comes in time.
   */
  const awaitAnswer = (commandId: string, route: Asked, onTimeout: () => void): void => {
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
    { quiet = false, commit }: { quiet?: boolean; commit?: (() => void) | undefined } = {},
  ) => {
    if (quiet) quietOnSuccess.add(frame.commandId);
    // The acknowledgement is queued first, so the result can never overtake it in the chat. A quiet
    // command is acknowledged only when it has to wait for the bridge.
    if (!options.connected()) reply(route, `${ack}\n${QUEUED_NOTE}`);
    else if (!quiet) reply(route, ack);
    // The route, the frame (the channel appends a reliable frame synchronously inside `send`) and the
    // caller's commit are one transaction: a result never arrives for a command with no route, and a
    // crash leaves the command either wholly queued and handled or not at all.
    let sent: Promise<void> | undefined;
    try {
      options.atomically(() => {
        options.routes.add(frame.commandId, route);
        sent = options.send(frame);
        commit?.();
      });
    } catch (error) {
      quietOnSuccess.delete(frame.commandId);
      throw error;
    }
    // Queued (and handled) now: a failed write is resent after the next handshake, and running the
    // command again would run it twice.
    void sent?.catch((error: unknown) =>
      logger.warn({ event: 'command_write_failed', error: errorText(error) }, 'command queued, resent later'),
    );
  };

  return {
    async run(command, route, from, commit) {
      const commandId = newId();
      switch (command.name) {
        case 'start':
        case 'help':
          reply(route, helpText(options.agent), from);
          return;
        case 'invalid':
          reply(route, command.reply);
          return;
        case 'ignored':
          return;
        case 'stop':
          return toBridge({ type: 'interrupt', commandId, route }, route, 'Stopping…', {
            quiet: true,
            commit,
          });
        case 'compact': {
          const admitted = options.spend?.admitCommand(commandId, route, from) ?? { admit: true };
          if (admitted.admit !== true) return reply(route, `Not compacted: ${admitted.reason}.`);
          return toBridge({ type: 'compact', commandId, route }, route, 'Compacting…', { commit });
        }
        case 'new':
          if (options.topics && (await options.topics.open(route)) !== 'clear') return;
          return toBridge({ type: 'clear', commandId, route }, route, 'Starting a new conversation…', {
            commit,
          });
        case 'clear':
          return toBridge({ type: 'clear', commandId, route }, route, 'Starting a new conversation…', {
            commit,
          });
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
            { commit },
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
            { commit },
          );
        }
        case 'status': {
          const own = () => statusText(options.status(route), undefined, undefined, options.simulatedModel);
          if (!options.connected()) return reply(route, own(), from);
          // If the bridge does not answer, answer from what the gateway knows.
          awaitAnswer(commandId, { ...route, to: from }, () =>
            reply(route, `${own()}\n(the agent did not answer; this is the gateway's view)`, from),
          );
          await options.send({ type: 'status_request', commandId, route });
          return;
        }
        case 'settings':
          if (options.settings) options.settings.show(route);
          else reply(route, 'Settings are not available here.');
          return;
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
            { commit },
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
        case 'schedules':
          return options.schedules ? options.schedules.show(route) : reply(route, 'No schedules here.');
        case 'resume':
        case 'handoff':
          if (options.terminal) return options.terminal.run(command.name, route, commit);
          reply(route, `/${command.name} is not available here.`);
          return;
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
      const asked = statusRoutes.get(frame.commandId);
      if (!asked) return;
      const { to, ...route } = asked;
      statusRoutes.delete(frame.commandId);
      const timer = statusTimers.get(frame.commandId);
      clock.clearTimeout(timer);
      statusTimers.delete(frame.commandId);
      if (frame.type === 'sessions') {
        const all = listsAll.delete(frame.commandId);
        const shown = all ? frame.sessions : frame.sessions.filter((s) => s.route.chatId === route.chatId);
        const view = sessionsView(
          shown,
          (action, target) => sessionButtons.issue(action, target, route),
          (info, index) => options.terminal?.sessionButtons(info, index, route) ?? [],
        );
        options.replyWithButtons(route, view.text, view.buttons);
        return;
      }
      reply(
        route,
        [
          statusText(options.status(route), frame, frame.costUsd, options.simulatedModel),
          historyText(frame.history, (markdown) => runsToText(markdownToRuns(markdown))),
        ]
          .filter(Boolean)
          .join('\n\n'),
        to,
      );
    },

    async press(data, from, commit, by) {
      if (data.startsWith(SCHEDULE_BUTTON_PREFIX))
        return options.schedules?.press(data, from, by) ?? SESSION_BUTTON_EXPIRED;
      if (options.terminal?.owns(data)) return options.terminal.press(data, from, commit);
      const parsed = sessionButtons.resolve(data, from);
      if (!parsed) return SESSION_BUTTON_EXPIRED;
      const commandId = newId();
      if (parsed.action === 'stop') {
        await toBridge(
          { type: 'stop_session', commandId, route: parsed.route },
          from,
          'Stopping that conversation…',
          { commit },
        );
      } else {
        await toBridge(
          { type: 'clear', commandId, route: parsed.route },
          from,
          'Resetting that conversation…',
          { commit },
        );
      }
      return parsed.action === 'stop' ? 'Stopping…' : 'Resetting…';
    },

    stop() {
      for (const timer of statusTimers.values()) clock.clearTimeout(timer);
      statusTimers.clear();
      options.terminal?.stop();
    },
  };
}
