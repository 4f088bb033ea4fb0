/**
 * The replies of the turns in flight, for the turns' shell (`turns.ts`): each turn's reply text
 * (`core/reply/reply-text.ts`) and its stream (through `Replies`, `io/reply/replies.ts`), held from the
 * machine's `track` until its render is reported, each in its conversation's answer order
 * (`io/reply/answer-order.ts`). It performs the machine's reply actions — open, show, finish, stop the
 * drafts — and tells the shell when a finish has ended.
 */
import type { Clock, Logger } from '@switchyard/protocol';
import { laneKey, threadParams } from '../../core/intake/route.js';
import { finalText } from '../../core/reply/final-text.js';
import { ReplyText } from '../../core/reply/reply-text.js';
import type { TurnAction } from '../../core/turns/turn-steps.js';
import { type AnswerLink, createAnswerOrder } from '../reply/answer-order.js';
import type { Replies } from '../reply/replies.js';
import { type BotApi, errorText } from '../telegram/bot-api.js';
import type { Courier } from '../telegram/courier.js';

/** What the turns' replies need. */
export interface TurnRepliesOptions {
  /** The reply factory. */
  replies: Pick<Replies, 'stream'>;
  /** For a finished turn's separate note. */
  api: Pick<BotApi, 'sendMessage'>;
  courier: Courier;
  logger: Logger;
  clock: Clock;
  /** A finish ended: rendered (`ok`) or given up; the shell feeds it to the machine. */
  rendered(turnId: string, ok: boolean): void;
}

/** The handle; each method performs the machine's action of the same name. */
export interface TurnReplies {
  track(action: TurnAction & { kind: 'track' }): void;
  open(action: TurnAction & { kind: 'open' }): void;
  show(turnId: string): void;
  finish(action: TurnAction & { kind: 'finish' }): void;
  stopDrafts(turnId: string): void;
  /** Applies a delta to a turn's reply text; false when it is outdated (and changes nothing). */
  delta(turnId: string, blockId: string, delta: string): boolean;
  /** Applies a consolidated block to a turn's reply text. */
  block(turnId: string, blockId: string, text: string): void;
  /** Waits for the final renders in flight. */
  drain(): Promise<void>;
}

/** The reply of a turn, from `track` until its finish is reported. */
interface Reply {
  text: ReplyText;
  stream: ReturnType<Replies['stream']> | undefined;
  /** Its place in the conversation's answer order (`io/reply/answer-order.ts`), once opened. */
  order: AnswerLink | undefined;
}

/** Creates the turns' replies; one per turns' shell. */
export function createTurnReplies(options: TurnRepliesOptions): TurnReplies {
  const { replies, api, courier, logger } = options;
  const texts = new Map<string, Reply>();
  const order = createAnswerOrder({
    clock: options.clock,
    onOvertake: (lane, waitedMs) =>
      logger.warn(
        { event: 'answer_order_overtaken', lane, waitedMs },
        'a reply stopped waiting for the previous reply of its conversation: that render hangs',
      ),
  });
  const finishing = new Set<Promise<void>>();

  const finish = (action: TurnAction & { kind: 'finish' }): void => {
    const reply = texts.get(action.turnId);
    const work = (async () => {
      const s = reply?.stream;
      if (!reply || !s) throw new Error('a turn finished without its reply');
      const final = finalText(
        { text: reply.text.text, outcome: action.outcome, error: action.error },
        s.notesInline,
      );
      await s.finish(final.reply);
      const note = final.separateNote;
      if (note)
        await courier.call(action.route.chatId, () =>
          api.sendMessage(action.route.chatId, note, threadParams(action.route)),
        );
      return true;
    })()
      .catch((error: unknown) => {
        logger.error(
          { event: 'turn_render_failed', turn: action.turnId, error: errorText(error) },
          'final render failed',
        );
        return false;
      })
      .then((ok) => {
        reply?.order?.settle();
        texts.delete(action.turnId);
        options.rendered(action.turnId, ok);
      })
      .catch((error: unknown) =>
        logger.error(
          { event: 'turn_rendered_failed', error: errorText(error) },
          'an outcome could not be recorded',
        ),
      )
      .finally(() => finishing.delete(work));
    finishing.add(work);
  };

  return {
    track(action) {
      texts.set(action.turnId, { text: new ReplyText(action.blocks), stream: undefined, order: undefined });
    },
    open(action) {
      const reply = texts.get(action.turnId);
      if (!reply) return;
      reply.order = order.link(laneKey(action.route));
      const stream = replies.stream(action, reply.order.after);
      if (action.thinking && 'thinking' in stream) stream.thinking();
      reply.stream = stream;
    },
    show(turnId) {
      const reply = texts.get(turnId);
      // Read when the stream edits, not at each delta (see `core/reply/reply-text.ts`).
      reply?.stream?.show(() => reply.text.text);
    },
    finish,
    stopDrafts(turnId) {
      const stream = texts.get(turnId)?.stream;
      if (stream && 'stopDrafts' in stream) stream.stopDrafts();
    },
    delta: (turnId, blockId, delta) => texts.get(turnId)?.text.delta(blockId, delta) ?? false,
    block(turnId, blockId, text) {
      texts.get(turnId)?.text.block(blockId, text);
    },
    async drain() {
      await Promise.all([...finishing]);
    },
  };
}
