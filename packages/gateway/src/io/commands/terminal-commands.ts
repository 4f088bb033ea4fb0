/**
 * `/resume`, `/handoff` and the `/sessions` worktree button, as a shell over their texts
 * (`core/commands/terminal-texts.ts`): asking the bridge (which alone reads Claude's transcripts and
 * processes), showing its answer with buttons, and turning a press into the bridge's command.
 *
 * Buttons carry only a server-side token (`tm:<token>`, `io/telegram/button-tokens.ts`): the session, page or
 * conversation a press acts on is kept here with the chat and topic the button was shown in, so a forged press
 * does nothing. Strangers never reach this (the allowlist runs first), so only allowed users see a list.
 *
 * Durability as for the other commands: `resume_session`, `handoff` and `worktree_remove` are reliable
 * frames queued in one transaction with the update's "handled" mark (and, for those answered by a
 * `command_result`, their route); `resume_list_request` is not (it dies with the connection), so its
 * route and fallback timer live in memory.
 */
import {
  type Clock,
  type FrameOf,
  type GatewayToBridge,
  type Logger,
  type Route,
  type SessionInfo,
  systemClock,
  type TimerHandle,
} from '@switchyard/protocol';
import type { InlineButton } from '../../core/commands/command-texts.js';
import { QUEUED_NOTE } from '../../core/commands/commands.js';
import {
  handoffHtml,
  resumeListView,
  type TerminalAction,
  worktreeButtons,
} from '../../core/commands/terminal-texts.js';
import { errorText } from '../telegram/bot-api.js';
import { createButtonTokens } from '../telegram/button-tokens.js';

/** Callback data of these buttons starts with this. */
export const TERMINAL_BUTTON_PREFIX = 'tm:';
/** Said to a press on a button whose token is gone. */
export const TERMINAL_BUTTON_EXPIRED = 'This button has expired: send the command again.';

/** What the terminal commands need of the gateway. */
export interface TerminalCommandsOptions {
  reply(route: Route, text: string): void;
  replyWithButtons(route: Route, text: string, buttons: InlineButton[][]): void;
  /** Sends Telegram HTML (the handoff's code block). */
  replyHtml(route: Route, html: string): void;
  /** Hands a frame to the bridge (reliable ones are durable when it resolves). */
  send(frame: GatewayToBridge): Promise<void>;
  connected(): boolean;
  /** Where a command answered by `command_result` answers to (the command runner's durable routes). */
  routes: { add(commandId: string, route: Route): void };
  atomically<T>(fn: () => T): T;
  logger: Logger;
  /** How long `/resume` waits for the bridge's list. */
  answerTimeoutMs?: number;
  clock?: Clock;
}

/** The handle; see the module comment. */
export interface TerminalCommands {
  /** Runs `/resume` or `/handoff` in `route`; `commit` as for the command runner's `run`. */
  run(name: 'resume' | 'handoff', route: Route, commit?: () => void): Promise<void>;
  /** A `resume_list` or `handoff_result` from the bridge. */
  frame(frame: FrameOf<'resume_list' | 'handoff_result'>): void;
  /** Whether callback data is one of these buttons. */
  owns(data: string): boolean;
  /** A press on one of these buttons in chat `from`; returns the text to answer the press with. */
  press(data: string, from: Route, commit?: () => void): Promise<string>;
  /** The worktree button of a `/sessions` row shown in `shownIn`. */
  sessionButtons(info: SessionInfo, index: number, shownIn: Route): InlineButton[];
  stop(): void;
}

/** Creates the terminal commands. */
export function createTerminalCommands(options: TerminalCommandsOptions): TerminalCommands {
  const { reply, logger } = options;
  const clock = options.clock ?? systemClock;
  // A topic is a conversation of its own: a button works only in the topic whose message carried it.
  const tokens = createButtonTokens<TerminalAction>(TERMINAL_BUTTON_PREFIX, () => clock.now(), {
    ttlMs: 60 * 60_000,
    max: 400,
    within: 'conversation',
  });
  /** `/resume` lists asked for and not yet answered: their chat and fallback timer. */
  const lists = new Map<string, { route: Route; timer: TimerHandle }>();
  const newId = (): string => `tm-${clock.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

  /** Queues a reliable frame with the caller's commit (and its route, when `routed`). */
  const queue = (
    frame: GatewayToBridge & { commandId: string },
    route: Route,
    ack: string,
    routed: boolean,
    commit?: () => void,
  ): void => {
    reply(route, options.connected() ? ack : `${ack}\n${QUEUED_NOTE}`);
    let sent: Promise<void> | undefined;
    options.atomically(() => {
      if (routed) options.routes.add(frame.commandId, route);
      sent = options.send(frame);
      commit?.();
    });
    void sent?.catch((error: unknown) =>
      logger.warn({ event: 'command_write_failed', error: errorText(error) }, 'command queued, resent later'),
    );
  };

  const askList = async (route: Route, target: Route, page: number): Promise<void> => {
    if (!options.connected()) {
      reply(route, 'The agent is restarting (bridge disconnected); try /resume again in a moment.');
      return;
    }
    const commandId = newId();
    const timer = clock.setTimeout(() => {
      if (lists.delete(commandId)) reply(route, 'The agent did not answer; try /resume again.');
    }, options.answerTimeoutMs ?? 5000);
    lists.set(commandId, { route, timer });
    await options.send({ type: 'resume_list_request', commandId, route: target, page });
  };

  return {
    async run(name, route, commit) {
      if (name === 'resume') return askList(route, route, 0);
      queue(
        { type: 'handoff', commandId: newId(), route },
        route,
        'Handing this conversation to the terminal…',
        false,
        commit,
      );
    },

    frame(frame) {
      if (frame.type === 'resume_list') {
        const asked = lists.get(frame.commandId);
        if (!asked) return;
        lists.delete(frame.commandId);
        clock.clearTimeout(asked.timer);
        const view = resumeListView(frame, (action) => tokens.issue(action, frame.route, asked.route));
        options.replyWithButtons(asked.route, view.text, view.buttons);
        return;
      }
      switch (frame.outcome) {
        case 'done':
          if (frame.sessionId !== undefined && frame.workDir !== undefined) {
            options.replyHtml(
              frame.route,
              handoffHtml({ ...frame, sessionId: frame.sessionId, workDir: frame.workDir }),
            );
            return;
          }
          reply(frame.route, 'Handed off.');
          return;
        case 'after_turn':
          options.replyWithButtons(
            frame.route,
            'A turn is running: I hand the conversation off as soon as it ends. To stop the turn and hand off now, press the button.',
            [
              [
                {
                  text: '⏹ Stop the turn and hand off now',
                  callback_data: tokens.issue({ kind: 'handoff_now' }, frame.route, frame.route),
                },
              ],
            ],
          );
          return;
        case 'failed':
          reply(frame.route, `Not handed off: ${frame.message ?? 'the agent could not stop its process.'}`);
          return;
      }
    },

    owns: (data) => tokens.owns(data),

    async press(data, from, commit) {
      const parsed = tokens.resolve(data, from);
      if (!parsed) return TERMINAL_BUTTON_EXPIRED;
      const { action, route } = parsed;
      const commandId = newId();
      switch (action.kind) {
        case 'resume':
          queue(
            { type: 'resume_session', commandId, route, sessionId: action.sessionId },
            from,
            `Opening session ${action.sessionId}…`,
            true,
            commit,
          );
          return 'Opening…';
        case 'page':
          await askList(from, route, action.page);
          return '';
        case 'handoff_now':
          queue(
            { type: 'handoff', commandId, route, now: true },
            from,
            'Stopping the turn and handing off…',
            false,
            commit,
          );
          return 'Stopping…';
        case 'worktree_remove':
          queue(
            { type: 'worktree_remove', commandId, route },
            from,
            'Resetting that conversation and removing its worktree…',
            true,
            commit,
          );
          return 'Removing…';
      }
    },

    sessionButtons: (info, index, shownIn) =>
      worktreeButtons(info, index, (action) => tokens.issue(action, info.route, shownIn)),

    stop() {
      for (const { timer } of lists.values()) clock.clearTimeout(timer);
      lists.clear();
    },
  };
}
