/**
 * The sandbox's records as Bot API objects: what a bot receives in updates and method results.
 * Pure mapping; the only Telegram quirk encoded here is that a message in a forum topic carries
 * `is_topic_message` and, when it is not a reply, a `reply_to_message` pointing at the topic's creation
 * message (which is how real clients and bots see topic messages).
 */
import type { ChatStore } from './chat-store.js';
import type { StoredFile } from './file-store.js';
import type { SandboxChat, SandboxMessage } from './records.js';
import type {
  WireChat,
  WireChatFullInfo,
  WireDocument,
  WireMessage,
  WirePhotoSize,
  WireVoice,
} from './wire.js';

/** The short `Chat` object for a chat. */
export function toWireChat(chat: SandboxChat): WireChat {
  if (chat.type === 'private') {
    const user = chat.user;
    return {
      id: chat.id,
      type: 'private',
      first_name: user?.first_name ?? chat.title,
      ...(user?.last_name !== undefined ? { last_name: user.last_name } : {}),
      ...(user?.username !== undefined ? { username: user.username } : {}),
    };
  }
  return {
    id: chat.id,
    type: chat.type,
    title: chat.title,
    ...(chat.isForum ? { is_forum: true as const } : {}),
  };
}

/** `getChat`'s `ChatFullInfo`, with the most recently pinned message. */
export function toWireChatFullInfo(store: ChatStore, chat: SandboxChat): WireChatFullInfo {
  const info: WireChatFullInfo = { ...toWireChat(chat), accent_color_id: 0, max_reaction_count: 11 };
  if (chat.availableReactions)
    info.available_reactions = chat.availableReactions.map((emoji) => ({ type: 'emoji', emoji }));
  const top = chat.pinned.at(-1);
  const pinned = top === undefined ? undefined : store.message(chat.id, top);
  if (pinned) info.pinned_message = toWireMessage(store, pinned, 1);
  return info;
}

/** Photo sizes for a stored photo: a thumbnail and the full size (the same bytes; sizes are nominal). */
export function toWirePhotoSizes(file: StoredFile, thumbnail?: StoredFile): WirePhotoSize[] {
  const width = file.width ?? 1280;
  const height = file.height ?? 960;
  const scale = 90 / Math.max(width, height);
  const sizes: WirePhotoSize[] = [];
  if (thumbnail) {
    sizes.push({
      file_id: thumbnail.fileId,
      file_unique_id: thumbnail.fileUniqueId,
      width: Math.max(1, Math.round(width * scale)),
      height: Math.max(1, Math.round(height * scale)),
      file_size: thumbnail.size,
    });
  }
  sizes.push({
    file_id: file.fileId,
    file_unique_id: file.fileUniqueId,
    width,
    height,
    file_size: file.size,
  });
  return sizes;
}

/** A `Voice` for a stored voice note. */
export function toWireVoice(file: StoredFile): WireVoice {
  return {
    file_id: file.fileId,
    file_unique_id: file.fileUniqueId,
    duration: file.duration ?? 1,
    file_size: file.size,
    ...(file.mimeType !== undefined ? { mime_type: file.mimeType } : {}),
  };
}

/** A `Document` for a stored file. */
export function toWireDocument(file: StoredFile): WireDocument {
  return {
    file_id: file.fileId,
    file_unique_id: file.fileUniqueId,
    file_size: file.size,
    ...(file.fileName !== undefined ? { file_name: file.fileName } : {}),
    ...(file.mimeType !== undefined ? { mime_type: file.mimeType } : {}),
  };
}

/**
 * A message as the Bot API shows it. `depth` limits nesting: replied-to and pinned messages are
 * included one level deep, as in Telegram.
 */
export function toWireMessage(store: ChatStore, message: SandboxMessage, depth = 0): WireMessage {
  const chat = store.chat(message.chatId);
  if (!chat) throw new Error(`message ${message.messageId} belongs to unknown chat ${message.chatId}`);
  const wire: WireMessage = {
    message_id: message.messageId,
    from: { ...message.sender },
    date: Math.floor(message.date / 1000),
    chat: toWireChat(chat),
  };
  if (message.threadId !== undefined) {
    wire.message_thread_id = message.threadId;
    wire.is_topic_message = true;
  }
  if (message.mediaGroupId !== undefined) wire.media_group_id = message.mediaGroupId;
  if (message.editedAt !== undefined) wire.edit_date = Math.floor(message.editedAt / 1000);
  const replyTo =
    message.replyToMessageId ??
    (message.threadId !== undefined && message.threadId !== message.messageId ? message.threadId : undefined);
  if (replyTo !== undefined && depth < 1) {
    const target = store.message(message.chatId, replyTo);
    if (target && !target.deleted) wire.reply_to_message = toWireMessage(store, target, depth + 1);
  }
  const entities = message.entities.length > 0 ? message.entities.map((e) => ({ ...e })) : undefined;
  switch (message.kind) {
    case 'text':
      wire.text = message.text;
      if (entities) wire.entities = entities;
      break;
    case 'photo':
    case 'document':
    case 'voice': {
      const file = message.file && store.files.get(message.file.fileId);
      if (file && message.kind === 'photo') wire.photo = photoSizes(store, file);
      if (file && message.kind === 'document') wire.document = toWireDocument(file);
      if (file && message.kind === 'voice') wire.voice = toWireVoice(file);
      if (message.text !== '') wire.caption = message.text;
      if (entities) wire.caption_entities = entities;
      break;
    }
    case 'service':
      if (message.service?.type === 'pinned_message') {
        const pinned = store.message(message.chatId, message.service.messageId);
        if (pinned && depth < 1) wire.pinned_message = toWireMessage(store, pinned, depth + 1);
      } else if (message.service?.type === 'forum_topic_created') {
        wire.forum_topic_created = { name: message.service.name, icon_color: 7322096 };
      }
      break;
  }
  if (message.replyMarkup) wire.reply_markup = structuredClone(message.replyMarkup);
  if (message.ephemeral) {
    wire.message_id = 0;
    wire.receiver_user = { ...message.ephemeral.receiver };
    wire.ephemeral_message_id = message.messageId;
  }
  return wire;
}

/** A photo's sizes: its thumbnail (when it has one) and itself. */
function photoSizes(store: ChatStore, file: StoredFile): WirePhotoSize[] {
  const thumbnail = file.thumbnailFileId === undefined ? undefined : store.files.get(file.thumbnailFileId);
  return toWirePhotoSizes(file, thumbnail);
}
