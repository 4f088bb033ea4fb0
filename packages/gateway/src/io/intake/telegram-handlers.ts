/**
 * The Telegram handlers, as one grammY `Composer`: the middleware every update goes through, in order —
 * skip what was handled already (a replay after a crash), refuse strangers, order per chat
 * (`sequentialize`), then a button press to the prompts or the `/sessions` buttons; a message to the
 * commands, the prompts (a typed answer) or the inbox; a draft's stop button to `/stop`; anything else
 * is only marked handled.
 *
 * Contract: "handled" is marked in ONE place, the outer `try/finally` of {@link telegramHandlers}: an
 * update whose handler returned is marked there, unless its handler's own transaction marked it already
 * — a user's message in the transaction that puts it in the inbox, a command in the one that keeps its
 * route and queues its frame (so a crash can neither run it twice nor lose it). An update whose handler
 * threw is NOT marked: a message or press whose handler throws (a full disk) is tried again after
 * {@link HANDLER_RETRY_DELAYS_MS}, in its lane, and the user is told when it keeps failing; one that never
 * succeeds stays unhandled, for the next boot to replay. The order for a message is durable row →
 * placeholder → frame to the bridge (see `onMessage`).
 */
import { sequentialize } from '@grammyjs/runner';
import {
  type Clock,
  type FrameOf,
  frameProblem,
  type Logger,
  type Route,
  systemClock,
} from '@switchyard/protocol';
import { Composer, type Context } from 'grammy';
import type { Message, Update } from 'grammy/types';
import { parseCommand } from '../../core/commands/commands.js';
import { REFUSAL, updateOrigin } from '../../core/intake/access.js';
import { addressedToBot, isGroupChat, stripMention } from '../../core/intake/addressing.js';
import { unforwardableText } from '../../core/intake/message-fit.js';
import { laneOfUpdate, routeOfMessage, routeOfStoppedDraft } from '../../core/intake/route.js';
import { userMessageFrame } from '../../core/intake/user-message-frame.js';
import type { BudgetVerdict } from '../../core/turns/turn-steps.js';
import type { GatewayStore } from '../../store/store.js';
import { SCHEDULE_BUTTON_PREFIX } from '../automation/schedule-buttons.js';
import type { CommandRunner } from '../commands/commands.js';
import { SESSION_BUTTON_PREFIX } from '../commands/session-buttons.js';
import { TERMINAL_BUTTON_PREFIX } from '../commands/terminal-commands.js';
import type { Prompts } from '../prompts/prompts.js';
import { SETTINGS_BUTTON_PREFIX } from '../settings/settings-buttons.js';
import type { SettingsPanel } from '../settings/settings-panel.js';
import type { SpendLedger } from '../spend/spend-ledger.js';
import { errorText } from '../telegram/bot-api.js';
import type { NewerParts } from '../telegram/server-parts.js';
import type { Turns } from '../turns/turns.js';
import { meteredTranscriber, takeRecording } from '../voice/voice-intake.js';
import type { Transcriber } from '../voice/voice-types.js';
import { type AttachmentOptions, saveAttachments } from './attachments.js';
import { inboundIdOf, unsupportedKind } from './intake.js';

/** What the handlers need from the gateway. */
export interface TelegramHandlerOptions {
  store: GatewayStore;
  turns: Pick<Turns, 'arrive' | 'draftStopped'>;
  prompts: Pick<Prompts, 'press' | 'typedAnswer'>;
  /**
   * Today's budget's verdict on a message about to start a turn (`io/spend/spend-ledger.ts`), asked before
   * the turn machine takes it: the machine marks a refused one unread, and a held one is passed later.
   */
  budget(frame: FrameOf<'user_message'>): BudgetVerdict;
  /** Hands an admitted user message to the bridge's channel; a no-op once the gateway has stopped. */
  forward(frame: FrameOf<'user_message'>): void;
  /** The daily budgets, for typed answers and transcriptions (messages are weighed by `budget`). */
  spend?: Pick<SpendLedger, 'allows' | 'chargeTranscription'>;
  /** The allowlist. */
  allowed(update: Update): boolean;
  /** Whether a Telegram user is on the allowlist (the author of a quoted message). */
  allowedUser(userId: number): boolean;
  /** An allowed user's message was accepted from this chat: the bridge may address it. */
  noteChat(chatId: number): void;
  /** Groups where the bot reads every message (`listen: all`), not only what is addressed to it. */
  listensToAll(chatId: number): boolean;
  /** Sends a plain message to a chat; never rejects. */
  reply(route: Route, text: string): Promise<unknown>;
  /**
   * Bot API 10.3 parts (`io/telegram/server-parts.ts`): a stranger's refusal in a group, a spent `/sessions`
   * button.
   */
  newerParts?: Pick<NewerParts, 'refuseInGroup' | 'spendButton'>;
  commands: Pick<CommandRunner, 'run' | 'press'>;
  /** The `/settings` panel's buttons (callback data starting with `st:`). */
  settings?: Pick<SettingsPanel, 'press'> | undefined;
  /** Models `/model` accepts. */
  models: readonly string[];
  /** Where attachments are downloaded to (the bot's own, unjournaled `getFile`). */
  attachments: AttachmentOptions;
  /**
   * Voice notes, audio files and video notes: transcribed in the message's lane (`io/voice/voice-intake.ts`),
   * and the chat told what was heard by `notify` (a reply to the note, `quiet` without a notification).
   */
  voice: {
    transcriber: Transcriber;
    notify(route: Route, replyTo: number, notice: { text: string; quiet: boolean }): Promise<unknown>;
  };
  /** A handler threw: the last error of the conversation it was for (the agent's when none). */
  setLastError(message: string, route?: Route): void;
  /** Waits before each retry of a handler that threw; default {@link HANDLER_RETRY_DELAYS_MS}. */
  retryDelaysMs?: readonly number[];
  /** Time for the retries' waits; default the system clock. */
  clock?: Clock;
  /** The bot's own id and username (`bot.botInfo`, known once `getMe` answered at boot). */
  me(): { id: number; username: string };
  logger: Logger;
}

/** The verdict a row the inbox already held gets: it was weighed when it first came in. */
const NOT_WEIGHED: BudgetVerdict = { admit: true };

/** Waits before the retries of a handler that threw: about ten seconds in all, then the next boot. */
export const HANDLER_RETRY_DELAYS_MS: readonly number[] = [500, 2_000, 8_000];

/** Told to the user when a message's handler failed twice: the gateway is still trying. */
export const HANDLER_TROUBLE =
  'I am having trouble storing your message (the server may be out of disk space); still trying…';
/** Told to the user when the gateway stops trying until its next start. */
export const HANDLER_GAVE_UP =
  'I could not take your message: it will be tried again when the service restarts. ' +
  'If it is urgent, tell the operator (the server may be out of disk space).';

/**
 * The gateway's middleware (see the module comment), to install with `bot.use` before the bot handles
 * any update; errors still thrown after the retries reach the bot's error handler (`bot.catch`).
 */
export function telegramHandlers(options: TelegramHandlerOptions): Composer<Context> {
  const { store, reply, logger } = options;
  const composer = new Composer<Context>();
  /** Updates whose handler marked them handled inside its own transaction (the finally skips them). */
  const markedInside = new Set<number>();
  /** Marks `updateId` handled now, inside the caller's transaction. */
  const commitOf = (updateId: number) => (): void => {
    store.markHandled(updateId);
    markedInside.add(updateId);
  };
  const retryDelays = options.retryDelaysMs ?? HANDLER_RETRY_DELAYS_MS;
  const clock = options.clock ?? systemClock;

  /**
   * Runs a handler, and again after each retry delay while it throws. The handlers may run twice: what
   * they write is keyed (the inbox by message, the update log by id), so a retry after a failed
   * transaction repeats nothing that was kept.
   */
  const withRetries = async (ctx: Context, route: Route | undefined, run: () => Promise<void>) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await run();
        return;
      } catch (error) {
        const delay = retryDelays[attempt];
        if (route && attempt === 1) void reply(route, HANDLER_TROUBLE);
        if (delay === undefined) {
          if (route) void reply(route, HANDLER_GAVE_UP);
          throw error;
        }
        logger.warn(
          {
            event: 'handler_retry',
            update: ctx.update.update_id,
            attempt,
            retryInMs: delay,
            error: errorText(error),
          },
          'update handler failed; retrying',
        );
        await clock.sleep(delay);
      }
    }
  };

  const onMessage = async (ctx: Context, message: Message): Promise<void> => {
    const s = store;
    const route = routeOfMessage(message);
    const updateId = ctx.update.update_id;
    const me = options.me();
    const group = isGroupChat(message);
    if (group && !options.listensToAll(message.chat.id) && !addressedToBot(message, me)) {
      // Not for the bot: not stored, never forwarded, no reply.
      return;
    }
    options.noteChat(message.chat.id);
    const raw = message.text ?? message.caption ?? '';
    const text = group ? stripMention(raw, me.username) : raw;

    if (message.text?.startsWith('/')) {
      const command = parseCommand(message.text, me.username, options.models);
      if (command) {
        await options.commands.run(command, route, message.from?.id, commitOf(updateId));
        return;
      }
    }
    const unsupported = unsupportedKind(message);
    if (unsupported) {
      await reply(route, `${unsupported} are not supported yet. Please send text, a photo or a document.`);
      return;
    }
    const spender = message.from?.id;
    // A typed answer lets a turn go on spending, so it is not taken once the budget is used up: it is then
    // a message like any other, and the budget says why it is not passed on. Turns running elsewhere do not
    // hold it back (`'hold'`): its own turn already holds a reservation.
    const mayAnswer = options.spend === undefined || options.spend.allows(route, spender).admit !== false;
    if (message.text && mayAnswer && (await options.prompts.typedAnswer(route, message.text))) return;
    const recording = await takeRecording(message, text, {
      ...options.voice,
      ...(options.spend !== undefined
        ? {
            transcriber: meteredTranscriber(options.voice.transcriber, options.spend, {
              id: inboundIdOf(message),
              route,
              userId: spender,
            }),
          }
        : {}),
      attachments: options.attachments,
    });
    const saved = recording ?? (await saveAttachments(message, options.attachments));
    if (!saved.ok) {
      await reply(route, saved.reply);
      return;
    }
    if (text.length === 0 && saved.attachments.length === 0) return;
    const inboundId = inboundIdOf(message);
    const frame = userMessageFrame(message, {
      inboundId,
      route,
      text: recording?.ok ? recording.text : text,
      attachments: saved.attachments,
      authorOf: (userId) =>
        userId === me.id
          ? 'bot'
          : userId !== undefined && options.allowedUser(userId)
            ? 'allowed'
            : 'third_party',
    });
    // Cut to the limits already: what still fails would never leave the inbox.
    const problem = frameProblem(frame);
    if (problem !== undefined) {
      await reply(route, unforwardableText(problem));
      return;
    }
    // Durable first (inbox row + update handled, one transaction), then today's budget, then the turn
    // machine takes the message with the budget's verdict (a refused one is marked there, and nothing
    // reports back), then an admitted frame (its channel-outbox append and socket write, a fraction of a
    // millisecond), and only then the acknowledgement's request (`Turns.arrive`): the message goes to
    // Claude without waiting behind it. A row the inbox had already (a replay) is not weighed again.
    s.addInbound({ inboundId, frame, updateId });
    markedInside.add(updateId);
    const row = s.getInbound(inboundId);
    if (!row) return;
    const budget = row.state === 'queued' ? options.budget(frame) : NOT_WEIGHED;
    const arrival = options.turns.arrive(row, budget);
    if (row.state === 'queued' && budget.admit === true) options.forward(frame);
    if (recording?.ok) void options.voice.notify(route, message.message_id, recording.notice);
    arrival.acknowledge();
  };

  // The one place an update is marked handled (see the module comment).
  composer.use(async (ctx, next) => {
    const updateId = ctx.update.update_id;
    if (store.isHandled(updateId)) return;
    let failed = false;
    try {
      await next();
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      if (!markedInside.delete(updateId) && !failed) store.markHandled(updateId);
    }
  });
  composer.use(async (ctx, next) => {
    const s = store;
    if (!options.allowed(ctx.update)) {
      const { userId } = updateOrigin(ctx.update);
      if (ctx.callbackQuery) {
        await ctx.answerCallbackQuery({ text: REFUSAL }).catch(() => {});
      } else if (userId !== undefined && ctx.chat?.type === 'private' && s.recordRefusal(userId)) {
        void reply({ chatId: ctx.chat.id }, REFUSAL);
      } else if (userId !== undefined && ctx.message) {
        // In a group, addressed to the bot: told once, where they alone see it; otherwise nothing is said.
        options.newerParts?.refuseInGroup(ctx.message, options.me(), REFUSAL, () => s.recordRefusal(userId));
      }
      logger.info({ event: 'refused', user: userId }, 'update from a user not on the allowlist');
      return;
    }
    await next();
  });
  // Presses get a lane of their own per chat: they are ordered among themselves (a double press is
  // answered once) but never wait behind a message's handler (a download, a queued reply).
  composer.use(
    sequentialize((ctx: Context) => {
      const lane = laneOfUpdate(ctx.update);
      const press = ctx.callbackQuery || ctx.update.stopped_message_generation;
      return press && lane !== undefined ? `${lane}:press` : lane;
    }),
  );
  composer.on('callback_query', (ctx) => withRetries(ctx, undefined, () => onPress(ctx)));
  const onPress = async (ctx: Context & { callbackQuery: NonNullable<Context['callbackQuery']> }) => {
    const data = ctx.callbackQuery.data ?? '';
    const message = ctx.callbackQuery.message;
    if (
      (data.startsWith(SESSION_BUTTON_PREFIX) ||
        data.startsWith(SCHEDULE_BUTTON_PREFIX) ||
        data.startsWith(TERMINAL_BUTTON_PREFIX)) &&
      message
    ) {
      const route = routeOfMessage(message as Message);
      const answer = await options.commands.press(
        data,
        route,
        commitOf(ctx.update.update_id),
        ctx.callbackQuery.from.id,
      );
      await ctx.answerCallbackQuery({ text: answer ?? '' }).catch(() => {});
      void options.newerParts?.spendButton(ctx.callbackQuery, answer);
      return;
    }
    if (data.startsWith(SETTINGS_BUTTON_PREFIX) && message && options.settings) {
      const route = routeOfMessage(message as Message);
      const press = { from: ctx.callbackQuery.from.id, messageId: message.message_id };
      const answer = await options.settings.press(
        data,
        route,
        press,
        commitOf(ctx.update.update_id),
        options.commands,
      );
      await ctx.answerCallbackQuery({ text: answer }).catch(() => {});
      return;
    }
    // Not awaited beyond the answer: a press never waits for the agent.
    await options.prompts.press(ctx.callbackQuery);
  };
  composer.on('message', (ctx) =>
    withRetries(ctx, routeOfMessage(ctx.message), () => onMessage(ctx, ctx.message)),
  );
  // The stop button of a draft (private chats): interrupts that conversation's turn exactly as `/stop`
  // does; the reply stops drafting and its partial text is kept as the final message.
  composer.on('stopped_message_generation', async (ctx) => {
    const route = routeOfStoppedDraft(ctx.update.stopped_message_generation);
    options.turns.draftStopped(route);
    await options.commands.run({ name: 'stop' }, route, undefined, commitOf(ctx.update.update_id));
  });
  // Anything else: nothing to do; the outer finally marks it handled.
  return composer;
}

/**
 * The bot's error handler for what the handlers still threw after their retries: the conversation's
 * last error (for `/status`) and the log. The update stays unhandled, for the next boot.
 */
export function handlerFailed(
  options: Pick<TelegramHandlerOptions, 'setLastError' | 'logger'>,
): (error: { ctx: Context; error: unknown }) => void {
  return (error) => {
    const { msg, chat } = error.ctx;
    options.setLastError(
      errorText(error.error),
      msg ? routeOfMessage(msg) : chat ? { chatId: chat.id } : undefined,
    );
    options.logger.error(
      { event: 'handler_failed', update: error.ctx.update.update_id, error: errorText(error.error) },
      'update handler failed',
    );
  };
}
