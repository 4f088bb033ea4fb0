/**
 * What a Telegram message becomes on the CLI's stdin: one stream-json `user` line whose text starts with
 * a compact header (chat, topic, message, sender, forward origin, reply-to) the model needs to answer in context.
 *
 * Every line the bridge writes as a `user` message also carries a `uuid` of the bridge's choosing: the
 * CLI answers it on stdout with `command_lifecycle queued` the moment it reads the line, and drops a later
 * line with a uuid it has already taken. That is how the bridge knows, after a crash between "about to
 * write" and "written", whether the line reached the process (see `delivery.ts`, exactly once into the CLI).
 * The header's `inbound=<id>` names the Telegram message in the transcript (history, and the fallback
 * check for an intent recorded before uuids were written).
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { FrameOf } from '@switchyard/protocol';

const IMAGE_TYPES: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
};

/** The string that identifies a message in the transcript. */
export function deliveryMarker(inboundId: string): string {
  return `inbound=${inboundId}`;
}

const quote = (value: string): string => JSON.stringify(value);

/**
 * The header line, e.g. `[telegram chat=-100123 topic=7 msg=42 from="Ann (@ann)" inbound=ib-9]`; for a
 * run of a schedule or webhook `[telegram chat=-100123 schedule="ci-digest" not_from_a_person inbound=…]`.
 */
function messageHeader(message: FrameOf<'user_message'>): string {
  const parts = [`chat=${message.route.chatId}`];
  if (message.route.threadId !== undefined) parts.push(`topic=${message.route.threadId}`);
  if (message.origin) {
    // Nobody typed it: a schedule or webhook of the operator's (or the agent's own) started this turn.
    parts.push(`${message.origin.kind}=${quote(message.origin.name)}`, 'not_from_a_person');
    parts.push(deliveryMarker(message.inboundId));
    return `[telegram ${parts.join(' ')}]`;
  }
  parts.push(`msg=${message.telegramMessageId}`);
  const name = message.sender.username
    ? `${message.sender.name} (@${message.sender.username})`
    : message.sender.name;
  parts.push(`from=${quote(name)}`);
  if (message.forwardedFrom) {
    // The text below is the forwarded author's, not the sender's; a third party's is only material.
    const label =
      message.forwardedFrom.author === 'third_party' ? 'forwarded_from_third_party' : 'forwarded_from';
    parts.push(`${label}=${quote(message.forwardedFrom.name)}`);
  }
  if (message.replyTo) {
    parts.push(`reply_to=${message.replyTo.messageId}`);
    if (message.replyTo.text) {
      // Someone not on the allowlist: their words are material to read, never instructions to follow.
      const label = message.replyTo.author === 'third_party' ? 'quoting_third_party' : 'quoting';
      parts.push(`${label}=${quote(message.replyTo.text.slice(0, 300))}`);
    }
  }
  parts.push(deliveryMarker(message.inboundId));
  return `[telegram ${parts.join(' ')}]`;
}

/**
 * The text of an enqueued user message without its header, or `undefined` when it has none (then it is
 * not a Telegram message: a task notification the CLI queued itself, say). The header is always exactly
 * the first line: every free-text value in it is JSON-quoted, so it holds no raw newline.
 */
export function stripMessageHeader(text: string): string | undefined {
  if (!text.startsWith('[telegram ')) return undefined;
  const end = text.indexOf('\n');
  const header = end < 0 ? text : text.slice(0, end);
  if (!header.endsWith(']') || !header.includes(' inbound=')) return undefined;
  return end < 0 ? '' : text.slice(end + 1);
}

/** Options of {@link renderUserMessage}. */
export interface RenderOptions {
  /** The line's `uuid` (see the module comment); written only when given. */
  uuid?: string;
  /** Reads a saved photo (default `readFileSync`; tests pass their own). */
  read?: (path: string) => Buffer;
}

/**
 * The stdin line for a user message. Photos become base64 image blocks (read from the files the gateway
 * saved); other files are named by path in the text so the model can open them. A photo that cannot be
 * read is named instead, with the reason, rather than dropping the message.
 */
export function renderUserMessage(message: FrameOf<'user_message'>, options: RenderOptions = {}): string {
  const read = options.read ?? readFileSync;
  const content: Record<string, unknown>[] = [];
  const notes: string[] = [];
  for (const attachment of message.attachments) {
    const mediaType = attachment.mime?.startsWith('image/')
      ? attachment.mime
      : IMAGE_TYPES[extname(attachment.path).toLowerCase()];
    if (attachment.kind === 'photo' && mediaType) {
      try {
        const data = read(attachment.path).toString('base64');
        content.push({ type: 'image', source: { type: 'base64', media_type: mediaType, data } });
        continue;
      } catch (err) {
        notes.push(`[photo at ${attachment.path} could not be attached: ${(err as Error).message}]`);
        continue;
      }
    }
    const details = [
      attachment.name,
      attachment.mime,
      attachment.size !== undefined ? `${attachment.size} bytes` : undefined,
    ]
      .filter(Boolean)
      .join(', ');
    notes.push(`[file: ${attachment.path}${details ? ` (${details})` : ''}]`);
  }
  const text = [messageHeader(message), ...notes, message.text].filter((part) => part !== '').join('\n');
  content.push({ type: 'text', text });
  return userLine(content, options.uuid);
}

/**
 * The stdin line for a slash command: plain text, no header (a header would stop it being a command).
 * `uuid` as for {@link renderUserMessage}: 2.1.328 acknowledges `/clear` and `/compact` the same way.
 */
export function renderSlashCommand(command: string, uuid?: string): string {
  return userLine(command, uuid);
}

function userLine(content: unknown, uuid: string | undefined): string {
  return JSON.stringify({
    type: 'user',
    message: { role: 'user', content },
    ...(uuid !== undefined ? { uuid } : {}),
  });
}
