/**
 * What Telegram does to a message's content before storing it: parse mode or explicit entities, the
 * trimming of surrounding whitespace, the length limits counted after entity parsing, and the inline
 * keyboard's validation. Pure functions that throw {@link BotApiError} with Telegram's texts.
 */
import { BotApiError, cantParseEntities, refuse } from './api-error.js';
import { parseTelegramHtml } from './html.js';
import type { WireInlineKeyboardButton, WireInlineKeyboardMarkup, WireMessageEntity } from './wire.js';

/** Telegram's limits, in UTF-16 code units after entity parsing. */
export const TEXT_LIMITS = { message: 4096, caption: 1024, callbackData: 64 } as const;

/** Text as stored: plain text plus entities. */
export interface FormattedText {
  text: string;
  entities: WireMessageEntity[];
}

/**
 * Applies `parse_mode` (HTML is parsed and validated; Markdown and MarkdownV2 are accepted but kept as
 * plain text, a known gap of the sandbox) or explicit `entities`, then trims surrounding whitespace as
 * Telegram does.
 */
export function formatText(raw: string, parseMode: string | undefined, entities: unknown): FormattedText {
  let formatted: FormattedText;
  const mode = (parseMode ?? '').toLowerCase();
  if (mode === 'html') {
    const parsed = parseTelegramHtml(raw);
    if (!parsed.ok) throw cantParseEntities(parsed.error);
    formatted = { text: parsed.text, entities: parsed.entities };
  } else if (mode === '' || mode === 'markdown' || mode === 'markdownv2') {
    formatted = { text: raw, entities: mode === '' ? explicitEntities(entities, raw.length) : [] };
  } else {
    throw refuse('unsupportedParseMode');
  }
  return trim(formatted);
}

/** Refuses text that is empty or longer than `limit` once parsed. */
export function checkLength(
  formatted: FormattedText,
  limit: number,
  errors: { empty?: BotApiError; tooLong: BotApiError },
): void {
  if (formatted.text.length === 0 && errors.empty) throw errors.empty;
  if (formatted.text.length > limit) throw errors.tooLong;
}

function explicitEntities(value: unknown, textLength: number): WireMessageEntity[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw cantParseEntities('entities must be an array');
  return value
    .filter(
      (e): e is WireMessageEntity =>
        typeof e === 'object' &&
        e !== null &&
        typeof e.type === 'string' &&
        Number.isInteger(e.offset) &&
        Number.isInteger(e.length) &&
        e.offset >= 0 &&
        e.length > 0 &&
        e.offset + e.length <= textLength,
    )
    .map((e) => ({ ...e }))
    .sort((a, b) => a.offset - b.offset || b.length - a.length);
}

/** Strips leading and trailing whitespace, clipping and shifting entities to match. */
function trim({ text, entities }: FormattedText): FormattedText {
  const start = text.length - text.trimStart().length;
  const end = text.trimEnd().length;
  if (start === 0 && end === text.length) return { text, entities };
  if (end <= start) return { text: '', entities: [] };
  const clipped: WireMessageEntity[] = [];
  for (const e of entities) {
    const from = Math.max(e.offset, start);
    const to = Math.min(e.offset + e.length, end);
    if (to > from) clipped.push({ ...e, offset: from - start, length: to - from });
  }
  return { text: text.slice(start, end), entities: clipped };
}

/**
 * The inline keyboard of a `reply_markup`, validated; undefined for no markup or for the other markup
 * kinds (reply keyboards, force_reply), which do not attach to the message.
 */
export function inlineKeyboard(markup: unknown): WireInlineKeyboardMarkup | undefined {
  if (markup === undefined || markup === null) return undefined;
  if (typeof markup !== 'object') throw refuse('textButtonsUnallowed');
  const rows = (markup as { inline_keyboard?: unknown }).inline_keyboard;
  if (rows === undefined) return undefined;
  if (!Array.isArray(rows)) throw badKeyboard('inline_keyboard must be an array of rows');
  const keyboard: WireInlineKeyboardButton[][] = [];
  for (const row of rows) {
    if (!Array.isArray(row)) throw badKeyboard('each keyboard row must be an array of buttons');
    keyboard.push(row.map(checkButton));
  }
  return { inline_keyboard: keyboard };
}

function checkButton(button: unknown): WireInlineKeyboardButton {
  if (
    typeof button !== 'object' ||
    button === null ||
    typeof (button as { text?: unknown }).text !== 'string'
  ) {
    throw badKeyboard('can\'t find field "text"');
  }
  const b = button as WireInlineKeyboardButton;
  const actions = Object.keys(b).filter((k) => k !== 'text' && b[k] !== undefined && b[k] !== null);
  if (actions.length === 0) throw refuse('textButtonsUnallowed');
  if (b.callback_data !== undefined) {
    const bytes = Buffer.byteLength(String(b.callback_data));
    if (typeof b.callback_data !== 'string' || bytes < 1 || bytes > TEXT_LIMITS.callbackData) {
      throw refuse('buttonDataInvalid');
    }
  }
  return structuredClone(b);
}

/** A malformed keyboard, refused with Telegram's "can't parse inline keyboard button" prefix. */
function badKeyboard(detail: string): BotApiError {
  return new BotApiError(400, `Bad Request: can't parse inline keyboard button: ${detail}`);
}

/** Whether two versions of content are the same for "message is not modified". */
export function sameContent(
  a: { text: string; entities: WireMessageEntity[]; replyMarkup?: WireInlineKeyboardMarkup | undefined },
  b: { text: string; entities: WireMessageEntity[]; replyMarkup?: WireInlineKeyboardMarkup | undefined },
): boolean {
  return (
    a.text === b.text &&
    JSON.stringify(a.entities) === JSON.stringify(b.entities) &&
    JSON.stringify(a.replyMarkup ?? null) === JSON.stringify(b.replyMarkup ?? null)
  );
}
