/**
 * The command backend: a local recognizer (whisper.cpp's `whisper-cli`, a script around pocketsphinx
 * or Vosk, …) run as `command[0]` with the rest as its arguments, each `{file}` replaced by the
 * recording's path. No shell is involved, so nothing in a path or a config value is interpreted.
 *
 * Its stdout is the text: lines trimmed, blank ones dropped, joined by single spaces (whisper prints a
 * segment a line). Exit code 0 is success; anything else fails with the code and the last line the
 * program wrote to stderr. The program runs in a process group of its own, killed whole (SIGKILL) when
 * the signal aborts — the deadline passed — so a recognizer that forks leaves nothing running.
 */
import { spawn } from 'node:child_process';
import type { Transcription, VoiceFile } from './voice-types.js';

/** Stdout kept at most; a recognizer printing more is cut (a voice note's text is far shorter). */
const STDOUT_LIMIT = 1024 * 1024;
/** The tail of stderr kept for the failure's reason. */
const STDERR_TAIL = 4096;

/** The program and arguments for `file`: every `{file}` in the arguments replaced by its path. */
export function commandFor(command: readonly [string, ...string[]], file: VoiceFile): [string, string[]] {
  const [program, ...args] = command;
  return [program, args.map((arg) => arg.replaceAll('{file}', file.path))];
}

/** Runs the recognizer over `file`; see the module comment. */
export function transcribeByCommand(
  command: readonly [string, ...string[]],
  file: VoiceFile,
  signal: AbortSignal,
): Promise<Transcription> {
  const [program, args] = commandFor(command, file);
  return new Promise((resolve) => {
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    const child = spawn(program, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: false,
      detached: true,
    });
    const kill = (): void => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    signal.addEventListener('abort', kill, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      if (stdoutBytes >= STDOUT_LIMIT) return;
      stdout.push(chunk);
      stdoutBytes += chunk.length;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    child.once('error', (error: NodeJS.ErrnoException) => {
      signal.removeEventListener('abort', kill);
      resolve({
        kind: 'failed',
        reason:
          error.code === 'ENOENT'
            ? `cannot run ${program}: not found (check voice.command in the config)`
            : `cannot run ${program} (${error.code ?? error.message})`,
      });
    });
    child.once('close', (code, killedBy) => {
      signal.removeEventListener('abort', kill);
      if (signal.aborted) {
        resolve({ kind: 'failed', reason: `${program} was stopped` });
        return;
      }
      if (code !== 0) {
        const last = stderr.trim().split('\n').at(-1)?.trim();
        const how = killedBy ? `was killed by ${killedBy}` : `exited with code ${code}`;
        resolve({ kind: 'failed', reason: `${program} ${how}${last ? `: ${last.slice(0, 300)}` : ''}` });
        return;
      }
      const text = Buffer.concat(stdout)
        .subarray(0, STDOUT_LIMIT)
        .toString('utf8')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '')
        .join(' ');
      resolve(
        text === '' ? { kind: 'failed', reason: `${program} printed no text` } : { kind: 'text', text },
      );
    });
  });
}
