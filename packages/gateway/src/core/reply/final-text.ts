/**
 * What a finished turn's reply says: the model's text and, when the turn did not simply succeed, a
 * note of what became of it ("⏹ Stopped.", "⚠️ The turn failed: …"). A rich reply carries the note
 * inside its one message, under a rule; a classic reply holds exactly the model's text and the note goes
 * in a message of its own. A turn with no text says its note, or "(no text)".
 */

/** How the turn ended, as its row records it. */
export interface TurnEnd {
  /** The model's text blocks, joined. */
  text: string;
  outcome: 'success' | 'interrupted' | 'error' | string | undefined;
  error: string | undefined;
}

/** The final reply: its text, and a note to send after it as a message of its own (classic only). */
export interface FinalText {
  reply: string;
  separateNote: string | undefined;
}

/** The note for a turn's outcome; undefined for a success. */
export function outcomeNote(end: Pick<TurnEnd, 'outcome' | 'error'>): string | undefined {
  if (end.outcome === undefined || end.outcome === 'success') return undefined;
  return end.outcome === 'interrupted' ? '⏹ Stopped.' : `⚠️ The turn failed: ${end.error ?? 'unknown error'}`;
}

/** The final text of a turn's reply; `notesInline` for rich replies (see the module comment). */
export function finalText(end: TurnEnd, notesInline: boolean): FinalText {
  const note = outcomeNote(end);
  if (end.text.length === 0) return { reply: note ?? '(no text)', separateNote: undefined };
  if (!note) return { reply: end.text, separateNote: undefined };
  return notesInline
    ? { reply: `${end.text}\n\n---\n\n${note}`, separateNote: undefined }
    : { reply: end.text, separateNote: note };
}
