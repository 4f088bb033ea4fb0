import type { WireFailure } from './wire.js';

/**
 * Telegram's own error descriptions for the refusals the sandbox reproduces, word for word where the
 * real text is known (clients and the gateway match on some of them). Parameterised texts are built by
 * the functions in {@link ApiErrors}.
 */
export const ERROR_TEXTS = {
  unauthorized: 'Unauthorized',
  notFound: 'Not Found',
  chatNotFound: 'Bad Request: chat not found',
  messageTextEmpty: 'Bad Request: message text is empty',
  messageTooLong: 'Bad Request: message is too long',
  captionTooLong: 'Bad Request: message caption is too long',
  notModified:
    'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
  messageToEditNotFound: 'Bad Request: message to edit not found',
  messageCantBeEdited: "Bad Request: message can't be edited",
  noTextToEdit: 'Bad Request: there is no text in the message to edit',
  noCaptionToEdit: 'Bad Request: there is no caption in the message to edit',
  messageToDeleteNotFound: 'Bad Request: message to delete not found',
  messageToPinNotFound: 'Bad Request: message to pin not found',
  messageToUnpinNotFound: 'Bad Request: message to unpin not found',
  replyNotFound: 'Bad Request: message to be replied not found',
  threadNotFound: 'Bad Request: message thread not found',
  notAForum: 'Bad Request: the chat is not a forum',
  topicNameInvalid: 'Bad Request: TOPIC_NAME_INVALID',
  noPinRights: 'Bad Request: not enough rights to manage pinned messages in the chat',
  wrongAction: 'Bad Request: wrong parameter action in request',
  reactionInvalid: 'Bad Request: REACTION_INVALID',
  queryTooOld: 'Bad Request: query is too old and response timeout expired or query ID is invalid',
  invalidFileId: 'Bad Request: invalid file_id',
  fileTooBig: 'Bad Request: file is too big',
  uploadTooLarge: 'Request Entity Too Large',
  mediaGroupSize: 'Bad Request: an album must have 2 to 10 items',
  mediaGroupMixed: "Bad Request: documents can't be mixed with other media types in an album",
  buttonDataInvalid: 'Bad Request: BUTTON_DATA_INVALID',
  textButtonsUnallowed:
    "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard",
  unsupportedParseMode: 'Bad Request: unsupported parse_mode',
  botCommandInvalid: 'Bad Request: BOT_COMMAND_INVALID',
  botCommandDescriptionInvalid: 'Bad Request: BOT_COMMAND_DESCRIPTION_INVALID',
  draftOnlyPrivate: 'Bad Request: sendMessageDraft can be used only in private chats',
  draftIdInvalid: 'Bad Request: draft_id must be non-zero',
  getUpdatesConflict:
    'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
  webhookActive:
    "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
} as const satisfies Record<string, string>;

/**
 * A request refused the way Telegram would refuse it. Thrown inside method handlers and turned into a
 * {@link WireFailure} body (with `error_code` as the HTTP status) by the dispatcher; it never escapes
 * the server. This is the only error class of the Telegram sandbox.
 */
export class BotApiError extends Error {
  /** The HTTP status and `error_code`: 400, 401, 404, 409 or 429. */
  readonly code: number;
  /** Seconds to wait, for 429 responses. */
  readonly retryAfter: number | undefined;

  constructor(code: number, description: string, retryAfter?: number) {
    super(description);
    this.name = 'BotApiError';
    this.code = code;
    this.retryAfter = retryAfter;
  }

  /** The response body Telegram sends for this refusal. */
  toWire(): WireFailure {
    const body: WireFailure = { ok: false, error_code: this.code, description: this.message };
    if (this.retryAfter !== undefined) body.parameters = { retry_after: this.retryAfter };
    return body;
  }
}

/** The HTTP status Telegram uses for each kind of description. */
function codeOf(description: string): number {
  if (description.startsWith('Conflict')) return 409;
  if (description === ERROR_TEXTS.unauthorized) return 401;
  if (description === ERROR_TEXTS.notFound) return 404;
  if (description === ERROR_TEXTS.uploadTooLarge) return 413;
  return 400;
}

/** A refusal with one of Telegram's fixed texts. */
export function refuse(text: keyof typeof ERROR_TEXTS): BotApiError {
  const description = ERROR_TEXTS[text];
  return new BotApiError(codeOf(description), description);
}

/** "Bad Request: can't parse entities: …", Telegram's answer to malformed HTML. */
export function cantParseEntities(detail: string): BotApiError {
  return new BotApiError(400, `Bad Request: can't parse entities: ${detail}`);
}

/** A required parameter was missing ("Bad Request: chat_id is empty"). */
export function missingParameter(name: string): BotApiError {
  return new BotApiError(400, `Bad Request: ${name} is empty`);
}

/** A parameter had the wrong type or shape. */
export function invalidParameter(name: string, detail = 'invalid value'): BotApiError {
  return new BotApiError(400, `Bad Request: ${detail} for parameter ${name}`);
}

/** A 429 with Telegram's text and `parameters.retry_after`. */
export function tooManyRequests(retryAfter: number): BotApiError {
  return new BotApiError(429, `Too Many Requests: retry after ${retryAfter}`, retryAfter);
}
