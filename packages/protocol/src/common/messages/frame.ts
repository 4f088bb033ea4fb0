/**
 * The wire vocabulary between the gateway and an agent's bridge: one discriminated union on `type`,
 * declared once, with its runtime schema beside it. Everything that crosses the socket is a `Frame`.
 *
 * Direction is a convention, not a separate type: `GatewayToBridge` names what the gateway sends,
 * `BridgeToGateway` what the bridge sends, and `Control` frames (handshake, ack, ping, error) flow both
 * ways. Receivers validate every frame with {@link parseFrame} and switch on `type`.
 *
 * Reliability: frames whose type is in {@link RELIABLE_TYPES} carry `seq`, stamped by the channel; the
 * sender keeps them until acknowledged and resends them after a reconnect. Everything else is
 * fire-and-forget (live text deltas, pings, acks).
 *
 * The members are declared by family, a file each: `control.ts` (both directions), `to-bridge.ts` (what
 * the gateway sends), `turn.ts` (a turn's events), `to-gateway.ts` (the bridge's other frames) and
 * `transfer.ts` (files, both directions, when the two sides share no disk), on the shared fields of
 * `fields.ts`; this file is their union and what is derived from it.
 */
import { z } from 'zod';
import { CONTROL_FRAMES } from './control.js';
import { GATEWAY_FRAMES } from './to-bridge.js';
import { BRIDGE_FRAMES } from './to-gateway.js';
import { TRANSFER_FRAMES } from './transfer.js';
import { TURN_FRAMES } from './turn.js';

/** Bumped on any incompatible change to a frame (`messages/`). Peers with different versions refuse each other. */
export const PROTOCOL_VERSION = 3;

/** Runtime schema of every frame; `parseFrame` is the only way input becomes a `Frame`. */
export const frameSchema = z.discriminatedUnion('type', [
  ...CONTROL_FRAMES,
  ...GATEWAY_FRAMES,
  ...TURN_FRAMES,
  ...BRIDGE_FRAMES,
  ...TRANSFER_FRAMES,
]);
/** Any frame on the wire. */
export type Frame = z.infer<typeof frameSchema>;
/** The tag of a frame. */
export type FrameType = Frame['type'];
/** The member of the union with tag `T`. */
export type FrameOf<T extends FrameType> = Extract<Frame, { type: T }>;

/** Frames the channel itself uses: handshake, acknowledgement, liveness, refusal. */
export type ControlFrame = FrameOf<'hello' | 'welcome' | 'ack' | 'ping' | 'pong' | 'error' | 'refused'>;
/** A file crossing between the two sides (`transfer.ts`): sent by either, so a member of both directions. */
export type TransferFrame = FrameOf<'transfer_offer' | 'transfer_chunk' | 'transfer_ack' | 'transfer_done'>;
/** What the gateway sends the bridge. */
export type GatewayToBridge =
  | TransferFrame
  | FrameOf<
      | 'user_message'
      | 'permission_answer'
      | 'question_answer'
      | 'interrupt'
      | 'set_model'
      | 'set_mode'
      | 'compact'
      | 'clear'
      | 'status_request'
      | 'rename'
      | 'stop_session'
      | 'sessions_request'
      | 'resume_list_request'
      | 'resume_session'
      | 'handoff'
      | 'worktree_remove'
      | 'file_sent'
      | 'schedule_result'
    >;
/** What the bridge sends the gateway. */
export type BridgeToGateway = Exclude<Frame, ControlFrame | GatewayToBridge> | TransferFrame;
/** Why a peer's input was refused. */
export type ProtocolErrorCode = FrameOf<'error'>['code'];
/** Why a receiver refused one reliable frame (see the `refused` frame). */
export type RefusalCode = FrameOf<'refused'>['code'];

/**
 * Types the channel numbers, keeps until acknowledged and resends after reconnect.
 * Everything not listed here may be lost with a connection.
 */
export const RELIABLE_TYPES = new Set<FrameType>([
  'user_message',
  'permission_answer',
  'question_answer',
  'interrupt',
  'set_model',
  'set_mode',
  'compact',
  'clear',
  'rename',
  'stop_session',
  'resume_session',
  'handoff',
  'worktree_remove',
  'handoff_result',
  'turn_started',
  'turn_ended',
  'text',
  'thinking',
  'tool_started',
  'tool_finished',
  'subagent_started',
  'subagent_tool_started',
  'subagent_tool_finished',
  'subagent_text',
  'subagent_finished',
  'permission_request',
  'question',
  'prompt_closed',
  'status',
  'message_taken',
  'messages_unread',
  'operator_event',
  'usage_limit',
  'session_waiting',
  'command_result',
  'file_sent',
  'file_send',
  'schedule_request',
  'schedule_result',
]);

/** A frame the channel numbers. */
export type ReliableFrame = Frame & { seq?: number };
/** Frames an application may hand to `send`: everything but the channel's own control frames. */
export type AppFrame = Exclude<Frame, ControlFrame>;

/** The outcome of {@link parseFrame}: a typed frame, or what was wrong with the input. */
export type ParseResult =
  | { ok: true; frame: Frame }
  | { ok: false; code: ProtocolErrorCode; message: string };

/** A schema field name or an array index: safe to name in an error. */
const FIELD_NAME = /^(?:[A-Za-z][A-Za-z0-9]{0,40}|\d{1,6})$/;

/**
 * Validates a decoded value as a frame. Never throws; on failure says which field was wrong, in the
 * form `path: problem` (for example `route.chatId: expected number, received string`).
 */
export function parseFrame(value: unknown): ParseResult {
  const result = frameSchema.safeParse(value);
  if (result.success) return { ok: true, frame: result.data };
  const first = result.error.issues.slice(0, 3).map((issue) => {
    // Record keys are user text (a question, a tool input's key): they are named `[key]`, never quoted.
    const path =
      issue.path.length > 0
        ? issue.path.map((part) => (FIELD_NAME.test(String(part)) ? String(part) : '[key]')).join('.')
        : '(frame)';
    return `${path}: ${issue.message}`;
  });
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  const prefix = typeof type === 'string' ? `frame of type ${JSON.stringify(type.slice(0, 50))}` : 'frame';
  return { ok: false, code: 'bad_message', message: `${prefix} is invalid: ${first.join('; ')}` };
}

/** Exhaustiveness check for `switch (frame.type)`. */
export function assertNever(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
