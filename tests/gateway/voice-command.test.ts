/**
 * The transcriber's command backend with real processes: a tiny node script plays the recognizer
 * (given the recording's path, it prints what it "hears"), and no shell is involved. A recognizer that
 * outlives the deadline is killed with its whole process group (a child it forked included), and one
 * that fails says how.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTranscriber, type VoiceFile } from '@switchyard/gateway';
import { afterEach, describe, expect, it } from 'vitest';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'voice-cmd-'));
  dirs.push(dir);
  return dir;
}

/** A recognizer script: prints "heard: <the file's text>" over two lines, as whisper prints segments. */
const RECOGNIZER = `
const fs = require('node:fs');
const file = process.argv[process.argv.indexOf('-f') + 1];
const said = fs.readFileSync(file, 'utf8').trim();
process.stdout.write('  heard:\\n\\n ' + said + '  \\n');
`;

/** A recognizer that forks a sleeper, records both pids, and never finishes. */
const HANGING = `
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
fs.writeFileSync(process.argv[2], JSON.stringify([process.pid, child.pid]));
setInterval(() => {}, 1000);
`;

function note(dir: string, text: string, durationSeconds = 5): VoiceFile {
  const path = join(dir, 'in-1.ogg');
  writeFileSync(path, text);
  return { path, durationSeconds, mime: 'audio/ogg' };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the command transcriber', () => {
  it("runs the program with the note's path in place of {file} and returns its stdout as one line", async () => {
    const dir = workspace();
    const script = join(dir, 'recognizer.cjs');
    writeFileSync(script, RECOGNIZER);
    // A path with shell metacharacters is passed as is: there is no shell to read them.
    const odd = join(dir, 'a $(touch pwned) b');
    const file = note(dir, 'turn the lights off');
    writeFileSync(`${odd}.ogg`, readFileSync(file.path));
    const transcriber = createTranscriber({ command: [process.execPath, script, '-f', '{file}'] });
    expect(await transcriber.transcribe(file)).toEqual({ kind: 'text', text: 'heard: turn the lights off' });
    expect(await transcriber.transcribe({ ...file, path: `${odd}.ogg` })).toEqual({
      kind: 'text',
      text: 'heard: turn the lights off',
    });
    expect(() => readFileSync(join(process.cwd(), 'pwned'))).toThrow();
  });

  it('kills a recognizer that outlives its deadline, with the child it forked', async () => {
    const dir = workspace();
    const script = join(dir, 'hang.cjs');
    const pids = join(dir, 'pids.json');
    writeFileSync(script, HANGING);
    const transcriber = createTranscriber({ command: [process.execPath, script, pids], timeoutMs: 3_000 });
    const started = Date.now();
    const outcome = await transcriber.transcribe(note(dir, 'x'));
    expect(outcome).toEqual({ kind: 'timed_out', afterMs: 3_000 });
    expect(Date.now() - started).toBeLessThan(10_000);
    const [parent, child] = JSON.parse(readFileSync(pids, 'utf8')) as [number, number];
    for (let i = 0; i < 100 && (alive(parent) || alive(child)); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(alive(parent)).toBe(false);
    expect(alive(child)).toBe(false);
  });

  it('fails with the exit code and the last line of stderr, or names a program that is not there', async () => {
    const dir = workspace();
    const script = join(dir, 'fail.cjs');
    writeFileSync(
      script,
      "console.error('loading model');console.error('model file missing');process.exit(3)",
    );
    expect(
      await createTranscriber({ command: [process.execPath, script] }).transcribe(note(dir, 'x')),
    ).toEqual({
      kind: 'failed',
      reason: `${process.execPath} exited with code 3: model file missing`,
    });
    expect(
      await createTranscriber({ command: ['no-such-recognizer-xyz', '{file}'] }).transcribe(note(dir, 'x')),
    ).toEqual({
      kind: 'failed',
      reason: 'cannot run no-such-recognizer-xyz: not found (check voice.command in the config)',
    });
  });

  it('refuses a note over the cap without running the program', async () => {
    const dir = workspace();
    const marker = join(dir, 'ran');
    const script = join(dir, 'mark.cjs');
    writeFileSync(
      script,
      `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran'); console.log('x')`,
    );
    const transcriber = createTranscriber({ command: [process.execPath, script], maxSeconds: 60 });
    expect(await transcriber.transcribe(note(dir, 'x', 61))).toEqual({
      kind: 'too_long',
      seconds: 61,
      maxSeconds: 60,
    });
    expect(() => readFileSync(marker)).toThrow();
  });
});
