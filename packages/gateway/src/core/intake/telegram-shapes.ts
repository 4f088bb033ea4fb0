/**
 * The parts of Telegram's updates and messages the intake rules read, as plain structural types: grammY's
 * `Update` and `Message` fit them as they are, and a core names them without importing grammY. Only the
 * fields a rule here reads are listed; a rule that needs another adds it here.
 */

/** A user as the rules read one. */
export interface UserShape {
  id: number;
  first_name?: string;
  last_name?: string;
  username?: string;
}

/** A message entity: where a mention sits, and whom a `text_mention` names. */
export interface EntityShape {
  type: string;
  offset: number;
  length: number;
  user?: { id: number };
}

/** Who wrote a forwarded message, as Telegram's `forward_origin` says. */
export type ForwardOriginShape =
  | { type: 'user'; sender_user: UserShape }
  | { type: 'hidden_user'; sender_user_name: string }
  | { type: 'chat'; sender_chat: { title?: string | undefined } }
  | { type: 'channel'; chat: { title?: string | undefined } };

/** A message as the intake rules read it (addressing, the `user_message` frame). */
export interface MessageShape {
  message_id: number;
  message_thread_id?: number;
  is_topic_message?: boolean;
  /** Unix time in seconds, as Telegram sends it. */
  date: number;
  chat: { id: number; type: string };
  from?: UserShape;
  text?: string;
  caption?: string;
  entities?: readonly EntityShape[];
  caption_entities?: readonly EntityShape[];
  /** grammY types a reply's own `reply_to_message` as `undefined`: Telegram never nests them. */
  reply_to_message?: MessageShape | undefined;
  forward_origin?: ForwardOriginShape;
}

/** An update as the access check reads it: who sent it and in which chat. */
export interface UpdateShape {
  message?: { from?: { id: number }; chat: { id: number } };
  edited_message?: { from?: { id: number }; chat: { id: number } };
  callback_query?: { from: { id: number }; message?: { chat: { id: number } } };
  stopped_message_generation?: { chat: { id: number } };
}
