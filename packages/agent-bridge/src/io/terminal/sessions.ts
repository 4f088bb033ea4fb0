/**
 * The Claude sessions of a working directory, read from Claude's own transcripts
 * (`$CLAUDE_CONFIG_DIR/projects/<encoded cwd>/<session-id>.jsonl`, `transcript.ts`), as `/resume` lists
 * them: one page, newest first (`core/terminal/session-list.ts`), each with when it started and was last written
 * and the start of its first user message, read from the head of its file.
 *
 * The first user message is the first main-agent `user` line with text (a message the bridge wrote loses
 * its Switchyard header; the CLI's own `<command-…>`/`<local-command-…>` markup and meta lines are not a
 * person's words), or else the first `queue-operation` `enqueue` with text.
 */
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cutEnd } from '@switchyard/card';
import type { TerminalSession } from '@switchyard/protocol';
import { RESUME_PAGE_SIZE, resumePage, type TranscriptFile } from '../../core/terminal/session-list.js';
import { stripMessageHeader } from '../delivery/user-input.js';
import { projectDir } from '../transcript/files.js';
import { textOf } from '../transcript/history.js';

/** Bytes read from the start of a transcript to find its first message (its first lines can be large). */
const HEAD_BYTES = 256 * 1024;
/** Characters of the first message shown. */
export const FIRST_TEXT_CHARS = 120;
/** A session id as the CLI names its files (a uuid). */
const SESSION_FILE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/;

/** Whether `id` is a session id as the CLI makes them (and so names no other file). */
export function isSessionId(id: string): boolean {
  return SESSION_FILE.test(`${id}.jsonl`);
}

/** The transcript files of `workDir`'s sessions; none when the directory has none (or is unreadable). */
export function transcriptFiles(configDir: string, workDir: string): TranscriptFile[] {
  const dir = projectDir(configDir, workDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.flatMap((name) => {
    const id = SESSION_FILE.exec(name)?.[1];
    if (!id) return [];
    try {
      const stat = statSync(join(dir, name));
      return stat.isFile() && stat.size > 0 ? [{ sessionId: id, mtimeMs: stat.mtimeMs }] : [];
    } catch {
      return [];
    }
  });
}

/**
 * One page of `workDir`'s sessions, summarised; `busy` says which may not be continued now, and only
 * those `listed` are counted and shown (a conversation sees its own and the terminal's, not another's).
 */
export function listTerminalSessions(
  configDir: string,
  workDir: string,
  page: number,
  busy: (sessionId: string, file: TranscriptFile) => string | undefined,
  current: string | undefined,
  listed: (sessionId: string) => boolean = () => true,
): { page: number; pageSize: number; total: number; sessions: TerminalSession[] } {
  const files = transcriptFiles(configDir, workDir).filter((file) => listed(file.sessionId));
  const shown = resumePage(files, page, RESUME_PAGE_SIZE);
  const sessions = shown.files.map((file): TerminalSession => {
    const head = summariseHead(readHead(join(projectDir(configDir, workDir), `${file.sessionId}.jsonl`)));
    const why = busy(file.sessionId, file);
    return {
      sessionId: file.sessionId,
      ...(head.startedAt !== undefined ? { startedAt: head.startedAt } : {}),
      lastAt: file.mtimeMs,
      firstText: head.firstText,
      ...(file.sessionId === current ? { current: true } : {}),
      ...(why !== undefined ? { busy: why.slice(0, 500) } : {}),
    };
  });
  return { page: shown.page, pageSize: RESUME_PAGE_SIZE, total: shown.total, sessions };
}

/** The whole lines in the first {@link HEAD_BYTES} of a file (none when it cannot be read). */
function readHead(path: string): string[] {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(HEAD_BYTES);
    const read = readSync(fd, buf, 0, HEAD_BYTES, 0);
    const text = buf.subarray(0, read).toString('utf8');
    const lines = text.split('\n');
    // A line cut by the read is not whole: dropped, unless the file ended there.
    if (read === HEAD_BYTES) lines.pop();
    return lines.filter((line) => line.length > 0);
  } catch {
    return [];
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** What the head of a transcript says: its first timestamp and the start of its first user message. */
export function summariseHead(lines: readonly string[]): { startedAt?: number; firstText: string } {
  let startedAt: number | undefined;
  let queued: string | undefined;
  for (const line of lines) {
    let value: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(line);
      if (typeof parsed !== 'object' || parsed === null) continue;
      value = parsed as Record<string, unknown>;
    } catch {
      continue;
    }
    if (startedAt === undefined && typeof value.timestamp === 'string') {
      const at = Date.parse(value.timestamp);
      if (!Number.isNaN(at)) startedAt = at;
    }
    if (value.type === 'queue-operation' && value.operation === 'enqueue' && queued === undefined) {
      const text = typeof value.content === 'string' ? personText(value.content) : undefined;
      if (text) queued = text;
    }
    if (value.type === 'user' && value.isSidechain !== true && value.isMeta !== true) {
      const content = (value.message as { content?: unknown } | undefined)?.content;
      const text = personText(textOf(content));
      if (text)
        return {
          ...(startedAt !== undefined ? { startedAt } : {}),
          firstText: cutEnd(text, FIRST_TEXT_CHARS),
        };
    }
  }
  return {
    ...(startedAt !== undefined ? { startedAt } : {}),
    firstText: queued ? cutEnd(queued, FIRST_TEXT_CHARS) : '',
  };
}

/** A message's words as a person wrote them, or undefined for the CLI's own markup. */
function personText(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const own = stripMessageHeader(text) ?? text;
  const flat = own.replace(/\s+/g, ' ').trim();
  if (!flat || /^<(command-|local-command-|system-reminder|task-notification)/.test(flat)) return undefined;
  return flat;
}
