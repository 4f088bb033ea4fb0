/**
 * The reply machine: one turn's reply as a pure state machine. The shell (`io/reply/reply.ts`) feeds it
 * inputs — the reply text changed, "thinking", the draft's stop button, the final Markdown, a timer
 * tick, the courier granting the reply its turn in the chat's lane, and the outcome of each operation —
 * each with an {@link ReplyEnv} stamped with the clock's time, and performs the actions it returns.
 *
 * Modes, decided once when the reply is created (`io/reply/replies.ts`), never again inside:
 * - `draft` (a private chat's reply that owns no message): the live text is an ephemeral draft paced by
 *   the chat's draft bucket and its own interval; an unchanged draft is sent again every
 *   `draftRefreshMs` so it never expires (drafts live 30 s) during a long tool phase. The stop button
 *   ends the drafts; the final text still goes out.
 * - `edit` (a group's reply, or a private chat's that owns a message already): its first message is
 *   sent when the first text is ready, then live rich edits of it (plain text where Telegram refuses
 *   the rich Markdown or the server lacks it). A reply that ends before that send goes out is sent once,
 *   final (the final call takes the queued live call's place).
 * - `classic`: live plain text over as many messages as it needs (past 4096 characters a new one).
 *
 * Invariants:
 * - One operation in flight: a courier call queued (`lane`) or one Bot API call running. Every other
 *   input only updates the state; the next operation is planned when the outcome comes back. Outcomes
 *   and grants of an older operation (its `seq`) are ignored.
 * - Edits, sends and deletes happen only inside a granted courier call, so the courier's budget paces
 *   them and the send journal's "one send per chat in flight" holds; what such a call does is decided
 *   when it is granted, from the newest text. Drafts do not spend the send budget and go at once.
 * - ONE place loop for the final render: slot by slot, edit the owned message or send a new one at that
 *   slot, then delete the surplus, last first (deleted before forgotten, so a crash leaves it listed).
 *   A rich refusal or a missing method re-plans the same messages from slot 0 as HTML chunks; an HTML
 *   refusal re-plans the same slot as its own plain text; a message gone is forgotten and its slot
 *   re-planned (the reply's next message, or a send). No second stream is ever built.
 * - `ids` is the one list of the reply's messages; every change to it is a `persist` action, emitted in
 *   the step that changes it (a send's id: in the step of its `ok`, which the shell reports inside the
 *   journal's transaction).
 * - The state is immutable: a step that changes nothing returns the same state object.
 */
import {
  type Content,
  type FinalPlan,
  type Operation,
  type Outcome,
  type ReplyAction,
  type ReplyEnv,
  type ReplyInput,
  type ReplyState,
  type ReplyStep,
  textOf,
} from './reply-state.js';

export * from './reply-state.js';

/** Applies one input; see the module comment. */
export function stepReply(state: ReplyState, input: ReplyInput, env: ReplyEnv): ReplyStep {
  const actions: ReplyAction[] = [];
  const applied = apply(state, input, env, actions);
  const next = applied.done || applied.op ? applied : advance(applied, env, actions);
  return { state: next, actions, wakeAt: wakeOf(next, env) };
}

function apply(s: ReplyState, input: ReplyInput, env: ReplyEnv, out: ReplyAction[]): ReplyState {
  if (s.done) return s;
  switch (input.kind) {
    case 'text':
      if (s.final || input.text === s.text) return s;
      return { ...s, text: input.text, version: s.version + 1, drafting: s.mode === 'draft' };
    case 'thinking':
      return s.mode !== 'draft' || s.final || s.drafting ? s : { ...s, drafting: true };
    case 'stop':
      return s.stopped ? s : { ...s, stopped: true };
    case 'finish': {
      if (s.final) return s;
      const level = s.mode !== 'classic' && env.rich ? 'rich' : 'html';
      // Telegram trims a rich message's text: trimmed here so what is stored is what is shown.
      const blank = input.markdown.trim().length === 0;
      const source = blank ? '(no text)' : s.mode === 'classic' ? input.markdown : input.markdown.trim();
      const final = newFinal(s, source, level);
      // A live call still queued is replaced by the first final one (same courier key).
      const op = s.op?.phase === 'queued' ? undefined : s.op;
      return { ...s, final, op, shown: s.shown.slice(0, s.ids.length) };
    }
    case 'tick':
      return s;
    case 'granted': {
      if (s.op?.phase !== 'queued' || s.op.seq !== input.seq) return s;
      return emit(s.final ? planFinal(s, s.final) : planLive(s, env), out);
    }
    case 'dropped':
      // Dropped unrun (the courier drains at shutdown): a live view waits for the next text.
      if (s.op?.seq !== input.seq) return s;
      return s.final ? { ...s, op: undefined } : { ...s, op: undefined, liveSeen: s.version };
    case 'outcome': {
      const op = s.op;
      if (op?.phase !== 'running' || op.seq !== input.seq) return s;
      const cleared = { ...s, op: undefined };
      // A live operation still running when the final render began is settled as live.
      if (s.final && !op.live) return settleFinal(cleared, s.final, op, input.outcome, out);
      return settleLive(cleared, op, input.outcome, out);
    }
  }
}

/** With nothing in flight: the next operation to start, or `done`. */
function advance(state: ReplyState, env: ReplyEnv, out: ReplyAction[]): ReplyState {
  if (state.final) {
    if (state.final.failed) return state;
    const final = skipShown(state, state.final);
    const s = final === state.final ? state : { ...state, final };
    if (finalComplete(s, final)) {
      out.push({ kind: 'done', ok: true });
      return { ...s, done: true };
    }
    const seq = s.seq + 1;
    out.push({ kind: 'lane', seq, priority: 'content', replaces: !final.started });
    return { ...s, seq, op: { phase: 'queued', seq }, final: { ...final, started: true } };
  }
  const s = state;
  if (s.mode === 'draft') {
    const due = draftDue(s, env);
    if (due === undefined || env.now < due) return s;
    const content: Content =
      s.text.trim().length === 0
        ? { kind: 'plain', text: '' }
        : { kind: 'rich', markdown: s.format.richLive(s.text, 'last') };
    return draft(s, content, env.now, out);
  }
  if (s.version <= s.liveSeen || s.text.trim().length === 0) return s;
  const seq = s.seq + 1;
  // The answer's first message is content (it goes before the chat's cosmetics); the edits that grow
  // it are streamed calls.
  out.push({ kind: 'lane', seq, priority: s.ids.length === 0 ? 'content' : 'stream', replaces: true });
  return { ...s, seq, op: { phase: 'queued', seq } };
}

/** When the next draft may go, or undefined when none is wanted. */
function draftDue(s: ReplyState, env: ReplyEnv): number | undefined {
  if (s.mode !== 'draft' || !s.drafting || s.stopped || s.final || s.done || s.op || !env.rich)
    return undefined;
  const own = s.version === s.draftVersion ? s.draftAt + s.draftRefreshMs : s.draftAt + s.draftEveryMs;
  return Math.max(own, env.now + env.draftDelay);
}

function wakeOf(s: ReplyState, env: ReplyEnv): number | undefined {
  const due = draftDue(s, env);
  return due !== undefined && due > env.now ? due : undefined;
}

function draft(s: ReplyState, content: Content, now: number, out: ReplyAction[]): ReplyState {
  const seq = s.seq + 1;
  out.push({ kind: 'draft', seq, content });
  const op: Operation = {
    phase: 'running',
    live: true,
    seq,
    does: 'draft',
    slot: 0,
    content,
    version: s.version,
    complete: true,
  };
  return { ...s, seq, op, draftAt: now };
}

/** Inside a granted live call: the one edit (or send) that moves the live view towards the text. */
function planLive(s: ReplyState, env: ReplyEnv): ReplyState {
  const idle = { ...s, op: undefined };
  if (s.text.trim().length === 0) return { ...idle, liveSeen: s.version };
  const running = (does: 'edit' | 'send', slot: number, content: Content, complete: boolean) => ({
    ...s,
    op: {
      phase: 'running',
      live: true,
      seq: s.op?.seq ?? s.seq,
      does,
      slot,
      content,
      version: s.version,
      complete,
    },
  });
  if (s.mode === 'edit') {
    const content: Content =
      !env.rich || s.livePlain === s.version
        ? { kind: 'plain', text: s.format.plainPieces(s.text)[0] ?? s.text }
        : { kind: 'rich', markdown: s.format.richLive(s.text, 'first') };
    // No message yet (no placeholder is sent): the first text is the answer's first message.
    if (s.ids.length === 0) return running('send', 0, content, true) as ReplyState;
    if (s.shown[0] === textOf(content)) return { ...idle, liveSeen: s.version };
    return running('edit', 0, content, true) as ReplyState;
  }
  const pieces = s.format.plainPieces(s.text);
  const i = pieces.findIndex((piece, index) => s.shown[index] !== piece);
  if (i < 0) return { ...idle, liveSeen: s.version };
  const complete = pieces.every((piece, index) => index === i || s.shown[index] === piece);
  const content: Content = { kind: 'plain', text: pieces[i] as string };
  return (
    i < s.ids.length
      ? running('edit', i, content, complete)
      : running('send', s.ids.length, content, complete)
  ) as ReplyState;
}

/** A live operation's outcome. */
function settleLive(
  s: ReplyState,
  op: Operation & { phase: 'running' },
  outcome: Outcome,
  out: ReplyAction[],
) {
  const error = 'error' in outcome ? outcome.error : undefined;
  const content = op.content as Content;
  if (op.does === 'draft') {
    if (outcome.kind === 'rich_refused' && content.kind === 'rich' && !s.final) {
      // Half-written Markdown can be refused (an unclosed `<details>`): this step goes as plain text.
      const plain = s.format.plainPieces(s.text);
      return draft(s, { kind: 'plain', text: plain[plain.length - 1] ?? '' }, s.draftAt, out);
    }
    if (outcome.kind === 'failed') out.push({ kind: 'warn', event: 'draft_failed', error });
    return { ...s, draftVersion: op.version };
  }
  if ((outcome.kind === 'rich_refused' || outcome.kind === 'missing') && content.kind === 'rich')
    return { ...s, livePlain: op.version };
  let next: ReplyState = s;
  if (outcome.kind === 'ok' && op.does === 'send' && outcome.messageId !== undefined) {
    next = {
      ...s,
      ids: [...s.ids, outcome.messageId],
      shown: withAt(s.shown, s.ids.length, textOf(content)),
    };
    out.push({ kind: 'persist', ids: next.ids });
  } else {
    // A live call that failed is not retried as such: the next text (or the final render) supersedes it.
    // (A group's plain fallback edit is best effort, unlogged.)
    const failed = outcome.kind !== 'ok' && outcome.kind !== 'not_modified';
    if (failed && (content.kind !== 'plain' || s.mode === 'classic'))
      out.push({ kind: 'warn', event: 'stream_edit_failed', error });
    // A failed call showed nothing we know of: recorded as shown, its text made the final render skip
    // the edit that had to put it there (`skipShown`), and the chat kept an older text for good.
    next = { ...s, shown: withAt(s.shown, op.slot, failed ? undefined : textOf(content)) };
  }
  return op.complete ? { ...next, liveSeen: Math.max(next.liveSeen, op.version) } : next;
}

/** A final operation's outcome: the place loop moves on, re-plans the same slot, or falls back. */
function settleFinal(
  s: ReplyState,
  final: FinalPlan,
  op: Operation & { phase: 'running' },
  outcome: Outcome,
  out: ReplyAction[],
): ReplyState {
  const error = 'error' in outcome ? outcome.error : undefined;
  const content = op.content;
  if (op.does === 'delete') {
    if (outcome.kind === 'failed') out.push({ kind: 'warn', event: 'stream_delete_failed', error });
    const ids = s.ids.slice(0, -1);
    out.push({ kind: 'persist', ids });
    return { ...s, ids, shown: s.shown.slice(0, ids.length) };
  }
  if (content === undefined) return s;
  if (outcome.kind === 'ok' || outcome.kind === 'not_modified') {
    let next = s;
    if (op.does === 'send' && outcome.kind === 'ok' && outcome.messageId !== undefined) {
      const ids = [...s.ids.slice(0, op.slot), outcome.messageId, ...s.ids.slice(op.slot)];
      const shown = [...s.shown.slice(0, op.slot), textOf(content), ...s.shown.slice(op.slot)];
      out.push({ kind: 'persist', ids });
      next = { ...s, ids, shown };
    } else next = { ...s, shown: withAt(s.shown, op.slot, textOf(content)) };
    return { ...next, final: { ...final, slot: op.slot + 1 } };
  }
  if (outcome.kind === 'gone' && op.does === 'edit') {
    // The user deleted this message: the same slot goes out as a new message.
    const ids = s.ids.filter((_, index) => index !== op.slot);
    out.push({ kind: 'persist', ids });
    return { ...s, ids, shown: s.shown.filter((_, index) => index !== op.slot) };
  }
  if (outcome.kind === 'html_refused' && content.kind === 'html') {
    out.push({ kind: 'warn', event: 'stream_html_rejected', error });
    const parts = final.parts.map((part, index) =>
      index === op.slot ? ({ kind: 'plain', text: content.text } as const) : part,
    );
    return { ...s, final: { ...final, parts } };
  }
  if ((outcome.kind === 'rich_refused' || outcome.kind === 'missing') && content.kind === 'rich') {
    out.push({ kind: 'warn', event: 'rich_refused', error });
    return { ...s, final: { ...newFinal(s, final.source, 'html'), started: true } };
  }
  out.push({ kind: 'warn', event: 'stream_final_failed', error });
  out.push({ kind: 'done', ok: false });
  return { ...s, done: true, final: { ...final, failed: true } };
}

/** The action of the operation a grant just started, if any. */
function emit(s: ReplyState, out: ReplyAction[]): ReplyState {
  const op = s.op;
  if (op?.phase !== 'running') return s;
  const { seq, slot, content } = op;
  const messageId = s.ids[slot] as number;
  if (op.does === 'delete') out.push({ kind: 'delete', seq, messageId });
  else if (content === undefined) return s;
  else if (op.does === 'edit') out.push({ kind: 'edit', seq, messageId, content });
  else {
    // The answer's first message replies to the message that opened the turn (a live one in a group).
    const replyTo = (s.final !== undefined || s.mode === 'edit') && content.kind === 'rich' && slot === 0;
    out.push({ kind: 'send', seq, slot, content, replyTo });
  }
  return s;
}

/**
 * The final plan past the parts its messages show already (a live edit or send put that very content
 * there): an edit of them would change nothing, and would spend one of the chat's message slots.
 */
function skipShown(s: ReplyState, final: FinalPlan): FinalPlan {
  let slot = final.slot;
  for (;;) {
    const part = final.parts[slot];
    if (part === undefined || slot >= s.ids.length || s.shown[slot] !== textOf(part)) break;
    slot++;
  }
  return slot === final.slot ? final : { ...final, slot };
}

/** Whether every part is placed and no surplus message is left. */
function finalComplete(s: ReplyState, final: FinalPlan): boolean {
  return final.slot >= final.parts.length && s.ids.length <= final.parts.length;
}

/**
 * Inside a granted final call: the place loop's next operation — the part at `slot` edited into the
 * owned message there or sent as a new one at that slot, or (all placed) the last surplus deleted.
 */
function planFinal(s: ReplyState, final: FinalPlan): ReplyState {
  const seq = (s.op as Operation).seq;
  const content = final.parts[final.slot];
  if (content !== undefined) {
    const does = final.slot < s.ids.length ? 'edit' : 'send';
    return {
      ...s,
      op: {
        phase: 'running',
        live: false,
        seq,
        does,
        slot: final.slot,
        content,
        version: s.version,
        complete: true,
      },
    };
  }
  if (s.ids.length > final.parts.length) {
    const slot = s.ids.length - 1;
    return {
      ...s,
      op: {
        phase: 'running',
        live: false,
        seq,
        does: 'delete',
        slot,
        content: undefined,
        version: s.version,
        complete: true,
      },
    };
  }
  return { ...s, op: undefined };
}

function newFinal(s: ReplyState, source: string, level: 'rich' | 'html'): FinalPlan {
  const parts: readonly Content[] =
    level === 'rich'
      ? s.format.richParts(source).map((markdown) => ({ kind: 'rich', markdown }))
      : s.format.htmlParts(source).map((chunk) => ({ kind: 'html', html: chunk.html, text: chunk.text }));
  return { source, parts, slot: 0, started: false, failed: false };
}

function withAt<T>(list: readonly T[], index: number, value: T): readonly T[] {
  const copy = [...list];
  copy[index] = value;
  return copy;
}
