/** The channel's own frames, both directions: handshake, acknowledgement, liveness, errors, refusal. */
import { z } from 'zod';
import { id, seq } from './fields.js';

const hello = z.object({
  type: z.literal('hello'),
  version: z.number().int(),
  agent: id,
  /** Random per process start; lets the peer tell a restart from a reconnect in its logs. */
  instanceId: id,
  /** Identifies the sender's outbox. A new stream (state wiped) resets the receiver's duplicate filter. */
  streamId: id,
  /** The peer stream this side has seen, and the last `seq` it handled from it (0 if none). */
  peerStreamId: z.string().max(200).optional(),
  lastSeen: z.number().int().nonnegative(),
  /** The sender's Switchyard release, so that a version mismatch names what each side runs. */
  release: z.string().max(200).optional(),
  /** The sender's host name: where the bridge runs (it may be another host than the gateway's). */
  host: z.string().max(255).optional(),
});
const welcome = hello.extend({ type: z.literal('welcome') });
const ack = z.object({ type: z.literal('ack'), seq: z.number().int().nonnegative() });
const ping = z.object({ type: z.literal('ping'), nonce: z.number().int() });
const pong = z.object({ type: z.literal('pong'), nonce: z.number().int() });
/** A protocol-level failure. The sender closes the connection after writing it. */
const error = z.object({
  type: z.literal('error'),
  code: z.enum([
    'bad_frame',
    'bad_message',
    'version_mismatch',
    'wrong_agent',
    'too_large',
    'sequence_gap',
    'internal',
    'handshake_timeout',
    'already_connected',
  ]),
  message: z.string().max(2000),
});
/**
 * The receiver could not take the reliable frame numbered `seq` (invalid, or its handler kept failing):
 * it counts as handled, and the sender drops it from its outbox. The connection stays open.
 */
const refused = z.object({
  type: z.literal('refused'),
  seq,
  code: z.enum(['invalid', 'handler_failed']),
  message: z.string().max(2000),
});
/** The control frames' schemas, in the union's order. */
export const CONTROL_FRAMES = [hello, welcome, ack, ping, pong, error, refused] as const;
