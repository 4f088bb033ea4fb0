/**
 * The Bot API objects this server sends and accepts, as JSON shapes. Only the fields the sandbox fills
 * are declared; names and nesting follow https://core.telegram.org/bots/api so a grammY client reads
 * them as the real thing. These are wire shapes: the server's own records live in `chat-store.ts`.
 */

/** A Telegram user or bot (`User`). */
export interface WireUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  last_name?: string;
  username?: string;
  language_code?: string;
}

/** The bot's own `User`, as `getMe` returns it. */
export interface WireBotUser extends WireUser {
  is_bot: true;
  can_join_groups: boolean;
  can_read_all_group_messages: boolean;
  supports_inline_queries: boolean;
  can_connect_to_business: boolean;
  has_main_web_app: boolean;
  /** Bot API 9.3: forum topic mode in private chats (BotFather's Threaded Mode). */
  has_topics_enabled: boolean;
  /** Bot API 9.3: users may create and delete topics in their private chat with the bot. */
  allows_users_to_create_topics: boolean;
}

/** Chat kinds the sandbox models; channels are not modelled. */
export type ChatType = 'private' | 'group' | 'supergroup';

/** `Chat`: the short chat object carried by every message. */
export interface WireChat {
  id: number;
  type: ChatType;
  title?: string;
  username?: string;
  first_name?: string;
  last_name?: string;
  is_forum?: true;
}

/** `ChatFullInfo`, as `getChat` returns it. */
export interface WireChatFullInfo extends WireChat {
  accent_color_id: number;
  max_reaction_count: number;
  /** Absent: every reaction is allowed. */
  available_reactions?: { type: 'emoji'; emoji: string }[];
  pinned_message?: WireMessage;
}

/** `MessageEntity`; offsets and lengths are in UTF-16 code units. */
export interface WireMessageEntity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  language?: string;
  custom_emoji_id?: string;
  user?: WireUser;
}

/** One `InlineKeyboardButton`; the sandbox acts on `callback_data` and shows the rest. */
export interface WireInlineKeyboardButton {
  text: string;
  callback_data?: string;
  url?: string;
  [other: string]: unknown;
}

/** `InlineKeyboardMarkup`. */
export interface WireInlineKeyboardMarkup {
  inline_keyboard: WireInlineKeyboardButton[][];
}

/** `PhotoSize`. */
export interface WirePhotoSize {
  file_id: string;
  file_unique_id: string;
  width: number;
  height: number;
  file_size?: number;
}

/** `Document`. */
export interface WireDocument {
  file_id: string;
  file_unique_id: string;
  file_name?: string;
  mime_type?: string;
  file_size?: number;
}

/** `Voice`: a voice note (OGG/Opus as Telegram's clients record it). */
export interface WireVoice {
  file_id: string;
  file_unique_id: string;
  duration: number;
  mime_type?: string;
  file_size?: number;
}

/** `File`, as `getFile` returns it. */
export interface WireFile {
  file_id: string;
  file_unique_id: string;
  file_size?: number;
  file_path?: string;
}

/** `Message`, with the subset of optional fields the sandbox produces. */
export interface WireMessage {
  message_id: number;
  message_thread_id?: number;
  is_topic_message?: true;
  from?: WireUser;
  date: number;
  edit_date?: number;
  chat: WireChat;
  reply_to_message?: WireMessage;
  text?: string;
  entities?: WireMessageEntity[];
  caption?: string;
  caption_entities?: WireMessageEntity[];
  photo?: WirePhotoSize[];
  document?: WireDocument;
  voice?: WireVoice;
  media_group_id?: string;
  pinned_message?: WireMessage;
  forum_topic_created?: { name: string; icon_color: number };
  reply_markup?: WireInlineKeyboardMarkup;
  /** For ephemeral messages, the user who received it. */
  receiver_user?: WireUser;
  /** For ephemeral messages, its identifier inside the chat (`message_id` is 0). */
  ephemeral_message_id?: number;
}

/** `CallbackQuery`. */
export interface WireCallbackQuery {
  id: string;
  from: WireUser;
  message?: WireMessage;
  chat_instance: string;
  data?: string;
}

/** `Update`: exactly one of the optional payloads is set. */
export interface WireUpdate {
  update_id: number;
  message?: WireMessage;
  edited_message?: WireMessage;
  callback_query?: WireCallbackQuery;
  stopped_message_generation?: WireMessageGenerationStopped;
}

/** `MessageGenerationStopped`: the user pressed a draft's stop button (`can_stop`). */
export interface WireMessageGenerationStopped {
  chat: WireChat;
  message_thread_id?: number;
  draft_id: number;
}

/** The update kinds this server produces, as named in `allowed_updates`. */
export type UpdateKind = 'message' | 'edited_message' | 'callback_query' | 'stopped_message_generation';

/** `BotCommand`. */
export interface WireBotCommand {
  command: string;
  description: string;
}

/** A successful Bot API response body. */
export interface WireOk<T = unknown> {
  ok: true;
  result: T;
}

/** A failed Bot API response body; `error_code` is also the HTTP status. */
export interface WireFailure {
  ok: false;
  error_code: number;
  description: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}
