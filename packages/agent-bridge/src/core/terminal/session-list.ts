/**
 * Which of a working directory's Claude sessions `/resume` shows, pure: one page of transcripts, newest
 * first. The shell (`io/terminal/sessions.ts`) lists the files, and reads the head of each shown one.
 */

/** Sessions per `/resume` page. */
export const RESUME_PAGE_SIZE = 6;

/** A transcript file as listed: its session id and last write. */
export interface TranscriptFile {
  sessionId: string;
  mtimeMs: number;
}

/** The page `page` of `files`, newest first, with the page actually shown (clamped) and the total. */
export function resumePage(
  files: readonly TranscriptFile[],
  page: number,
  size = RESUME_PAGE_SIZE,
): { page: number; total: number; files: TranscriptFile[] } {
  const sorted = [...files].sort((a, b) => b.mtimeMs - a.mtimeMs || a.sessionId.localeCompare(b.sessionId));
  const last = Math.max(0, Math.ceil(sorted.length / size) - 1);
  const shown = Math.min(Math.max(0, Math.floor(page)), last);
  return { page: shown, total: sorted.length, files: sorted.slice(shown * size, shown * size + size) };
}
