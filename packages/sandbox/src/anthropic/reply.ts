/**
 * A model reply and its two wire forms: the Messages API SSE event sequence and the non-streaming JSON
 * message. Pure: the HTTP layer decides when each event is written (chunk delays, aborts).
 */

/** A block the scripted model says. Tool-use ids are assigned when the reply is served unless given. */
export type ReplyBlock =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'thinking'; readonly thinking: string }
  | { readonly type: 'tool_use'; readonly name: string; readonly input: unknown; readonly id?: string };

/** One model reply: one API response, i.e. one `message_start` … `message_stop`. */
export interface Reply {
  readonly type: 'reply';
  readonly blocks: readonly ReplyBlock[];
  /** Characters per `text_delta`/`thinking_delta`/`input_json_delta` (default: the model's `chunkSize`). */
  readonly chunkSize?: number;
  /** Pause before each delta, in ms (default: the model's `chunkDelayMs`); lets a test interrupt mid-stream. */
  readonly chunkDelayMs?: number;
  /**
   * Pause before the response's first byte, in ms: the request is in, the model has not answered yet
   * (what a test needs to write a steer after a request went out and before its `message_start`).
   */
  readonly startDelayMs?: number;
  /** Overrides the stop reason, which is otherwise `tool_use` when a tool is called and `end_turn` if not. */
  readonly stopReason?: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'refusal';
}

/** One server-sent event: `event: <name>\ndata: <json>\n\n`, where `data.type` equals the name. */
export interface SseEvent {
  readonly event: string;
  readonly data: { readonly type: string; readonly [key: string]: unknown };
  /** True for the deltas a chunk delay applies to. */
  readonly delta: boolean;
}

/** What the serving side fills in for a reply: ids and the usage numbers it reports. */
export interface ReplyMeta {
  readonly messageId: string;
  readonly model: string;
  readonly inputTokens: number;
  /** Called once per tool_use block without an id. */
  readonly nextToolUseId: () => string;
}

/** A reply with ids assigned, ready for either wire form. */
export interface ResolvedReply {
  readonly blocks: readonly ReplyBlock[];
  readonly stopReason: string;
  readonly meta: ReplyMeta;
  readonly outputTokens: number;
}

/** Fixes a reply's ids and stop reason once, so both wire forms and the recorder agree. */
export function resolveReply(reply: Reply, meta: ReplyMeta): ResolvedReply {
  const blocks = reply.blocks.map((b) =>
    b.type === 'tool_use' && b.id === undefined ? { ...b, id: meta.nextToolUseId() } : b,
  );
  const stopReason =
    reply.stopReason ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const outputChars = blocks.reduce((n, b) => n + blockText(b).length, 0);
  return { blocks, stopReason, meta, outputTokens: Math.max(1, Math.ceil(outputChars / 4)) };
}

function blockText(b: ReplyBlock): string {
  switch (b.type) {
    case 'text':
      return b.text;
    case 'thinking':
      return b.thinking;
    case 'tool_use':
      return JSON.stringify(b.input ?? {});
  }
}

function usage(r: ResolvedReply, outputTokens: number) {
  return {
    input_tokens: r.meta.inputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: outputTokens,
    service_tier: 'standard',
  };
}

function chunks(text: string, size: number): string[] {
  if (text === '') return [];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** A signature the CLI keeps and sends back; the fake never checks it. */
const FAKE_SIGNATURE = 'c2NyaXB0ZWQtbW9kZWw=';

/** The SSE events of a reply, in order, text split into `chunkSize`-character deltas. */
export function sseEvents(r: ResolvedReply, chunkSize: number): SseEvent[] {
  const size = Math.max(1, Math.floor(chunkSize));
  const ev = (type: string, data: Record<string, unknown> = {}, delta = false): SseEvent => ({
    event: type,
    data: { type, ...data },
    delta,
  });
  const out: SseEvent[] = [
    ev('message_start', {
      message: {
        id: r.meta.messageId,
        type: 'message',
        role: 'assistant',
        model: r.meta.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: usage(r, 1),
      },
    }),
  ];
  r.blocks.forEach((b, index) => {
    switch (b.type) {
      case 'text':
        out.push(ev('content_block_start', { index, content_block: { type: 'text', text: '' } }));
        for (const text of chunks(b.text, size))
          out.push(ev('content_block_delta', { index, delta: { type: 'text_delta', text } }, true));
        break;
      case 'thinking':
        out.push(
          ev('content_block_start', {
            index,
            content_block: { type: 'thinking', thinking: '', signature: '' },
          }),
        );
        for (const thinking of chunks(b.thinking, size))
          out.push(ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } }, true));
        out.push(
          ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: FAKE_SIGNATURE } }),
        );
        break;
      case 'tool_use':
        out.push(
          ev('content_block_start', {
            index,
            content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
          }),
        );
        for (const partial_json of chunks(JSON.stringify(b.input ?? {}), size))
          out.push(
            ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }, true),
          );
        break;
    }
    out.push(ev('content_block_stop', { index }));
  });
  out.push(
    ev('message_delta', {
      delta: { stop_reason: r.stopReason, stop_sequence: null },
      usage: usage(r, r.outputTokens),
    }),
  );
  out.push(ev('message_stop'));
  return out;
}

/** The SSE wire text of one event. */
export function encodeSse(e: SseEvent): string {
  return `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/** The reply as a non-streaming Messages API response body. */
export function messageJson(r: ResolvedReply): Record<string, unknown> {
  return {
    id: r.meta.messageId,
    type: 'message',
    role: 'assistant',
    model: r.meta.model,
    content: r.blocks.map((b) => (b.type === 'thinking' ? { ...b, signature: FAKE_SIGNATURE } : b)),
    stop_reason: r.stopReason,
    stop_sequence: null,
    usage: usage(r, r.outputTokens),
  };
}
