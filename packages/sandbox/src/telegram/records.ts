/**
 * The sandbox's records as the control API hands them out: chats, messages with their edit history,
 * chat actions, drafts and callback queries. Plain data (snapshots); `ChatStore` owns the live copies.
 */
import type { ChatType, WireInlineKeyboardMarkup, WireMessageEntity, WireUser } from './wire.js';

/** A forum topic; `threadId` is the id of the service message that created it, as in Telegram. */
export interface SandboxTopic {
  threadId: number;
  name: string;
}

/** A chat's settings and current pins. */
export interface SandboxChat {
  id: number;
  type: ChatType;
  /** Group title, or the user's name for a private chat. */
  title: string;
  /** The other party of a private chat. */
  user?: WireUser;
  isForum: boolean;
  topics: SandboxTopic[];
  /** Whether the bot may pin and unpin here (always true in private chats). */
  botCanPin: boolean;
  /** Pinned message ids, oldest first; the last one is what `getChat().pinned_message` returns. */
  pinned: number[];
  /**
   * The emoji the chat's settings allow as reactions (`available_reactions`); undefined: every one bots
   * may set. `setMessageReaction` with any other is `REACTION_INVALID`; an empty list turns them off.
   */
  availableReactions?: string[] | undefined;
}

/** One version of a message's visible content. */
export interface MessageVersion {
  /** Text, or caption for a photo or document. */
  text: string;
  entities: WireMessageEntity[];
  /** `text` with its entities as Telegram HTML, ready to display. */
  html: string;
  /** Set on a rich message's version (`sendRichMessage`, or an edit with `rich_message`): `text` is its Markdown. */
  rich?: true;
  replyMarkup?: WireInlineKeyboardMarkup;
  /** When this version appeared, in the server clock's milliseconds. */
  at: number;
}

/** A file attached to a message. */
export interface SandboxFileRef {
  fileId: string;
  fileUniqueId: string;
  size: number;
  fileName?: string;
  mimeType?: string;
  width?: number;
  height?: number;
  /** A voice note's length in seconds. */
  duration?: number;
}

/** What a service message announces. */
export type ServiceAction =
  | { type: 'pinned_message'; messageId: number }
  | { type: 'forum_topic_created'; name: string };

/** A message as the chat's user sees it, with everything it has been. */
export interface SandboxMessage {
  chatId: number;
  messageId: number;
  /** The forum topic; absent in the General topic and in chats without topics. */
  threadId?: number;
  from: 'user' | 'bot';
  sender: WireUser;
  kind: 'text' | 'photo' | 'document' | 'voice' | 'service';
  /** Current text (or caption), entities, HTML and keyboard: the last entry of `history`. */
  text: string;
  entities: WireMessageEntity[];
  html: string;
  /** A rich message (now): `text` is its Markdown and `html` its rendering. */
  rich?: true;
  replyMarkup?: WireInlineKeyboardMarkup;
  /** Every version, oldest first; length 1 means never edited. */
  history: MessageVersion[];
  replyToMessageId?: number;
  /** The photo (largest size), document or voice note. */
  file?: SandboxFileRef;
  /** Set on every message of an album (`sendMediaGroup`), the same for all of them. */
  mediaGroupId?: string;
  service?: ServiceAction;
  /** Sent at, in the server clock's milliseconds. */
  date: number;
  editedAt?: number;
  deleted: boolean;
  deletedAt?: number;
  pinned: boolean;
  /** The bot's reactions on the message (emoji). */
  reactions: string[];
  /**
   * An ephemeral message (`ephemeral_message_parameters`): only `receiver` sees it; on the wire its
   * `message_id` is 0 and `ephemeral_message_id` is this `messageId`.
   */
  ephemeral?: { receiver: WireUser; callbackQueryId?: string };
  /** Sent (or, for a pin notice, pinned) with `disable_notification`: the user got no notification. */
  silent: boolean;
}

/** A chat action the bot sent ("typing"); Telegram shows it for 5 s or until the bot's next message. */
export interface ChatActionRecord {
  chatId: number;
  threadId?: number;
  action: string;
  at: number;
}

/** One `sendMessageDraft` or `sendRichMessageDraft` call. */
export interface DraftRecord {
  chatId: number;
  threadId?: number;
  draftId: number;
  /** Text, or a rich draft's Markdown; empty shows "Thinking…". */
  text: string;
  entities: WireMessageEntity[];
  html: string;
  /** Sent with `sendRichMessageDraft`. */
  rich?: true;
  /** The user is shown a stop button (`can_stop`). */
  canStop: boolean;
  /** Sent with `keep_on_stop` (Bot API 10.3): the draft stays shown when the user presses stop. */
  keepOnStop?: true;
  at: number;
  /** The user pressed its stop button at this time. */
  stoppedAt?: number;
  /**
   * A bot message followed it in its chat, or the user stopped it without `keep_on_stop`: clients show it
   * no longer (nor its stop button).
   */
  superseded?: true;
}

/** A press of a draft's stop button: the bot receives `stopped_message_generation`. */
export interface DraftStopRecord {
  chatId: number;
  threadId?: number;
  draftId: number;
  at: number;
}

/** How the bot answered a callback query. */
export interface CallbackAnswer {
  text?: string;
  showAlert: boolean;
  url?: string;
  at: number;
}

/** A button press and, once the bot has answered it, the answer. */
export interface CallbackQueryRecord {
  id: string;
  chatId: number;
  messageId: number;
  threadId?: number;
  data: string;
  from: WireUser;
  at: number;
  answer?: CallbackAnswer;
}
