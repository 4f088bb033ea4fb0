// The agent-bridge benchmark. Run from the repo root: `node packages/agent-bridge/bench/bench.mjs`
// (builds nothing: run `npx tsc -b packages/agent-bridge` first). Prints throughput of the translator and
// the transcript tail on 50 MB of recorded lines, each as a ratio to plain JSON.parse of the same lines
// in the same run, and the bridge's resident memory idle and while streaming.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryChannelStore, createProtocolServer } from '../../protocol/dist/index.js';
import { Session } from '../dist/core/session/session.js';
import { translateLine } from '../dist/core/translate/translator.js';
import { StdoutReader } from '../dist/io/process/stdout-reader.js';
import { recordedProcesses } from '../dist/io/process/stop.js';
import { mayBeHistory } from '../dist/io/transcript/history.js';
import { TranscriptTail } from '../dist/io/transcript/transcript.js';

const TARGET = 50 * 1024 * 1024;
const fixtures = new URL('../test/fixtures/', import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), 'sy-bench-'));

function buildLog(suffix, path) {
  const sample = readdirSync(fixtures)
    .filter((n) => n.endsWith(suffix))
    .map((n) => readFileSync(join(fixtures, n), 'utf8'))
    .join('');
  const parts = [];
  let size = 0;
  while (size < TARGET) {
    parts.push(sample);
    size += Buffer.byteLength(sample);
  }
  writeFileSync(path, parts.join(''));
  return size;
}

function readLines(path) {
  const reader = new StdoutReader(path, 0, 2 * 1024 * 1024);
  const out = [];
  for (;;) {
    const lines = reader.read(64 * 1024 * 1024);
    if (lines.length === 0) break;
    for (const l of lines) out.push(l);
    reader.advance(lines.at(-1).end);
  }
  reader.close();
  return out;
}

function time(fn) {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const mb = (bytes, ms) => `${(bytes / 1024 / 1024 / (ms / 1000)).toFixed(0)} MB/s`;

// 1. Translator on a 50 MB stdout log.
const stdoutPath = join(root, 'stdout.log');
const stdoutBytes = buildLog('.stdout.jsonl', stdoutPath);
const lines = readLines(stdoutPath);
const best = (fn) => Math.min(time(fn), time(fn), time(fn));
const parseMs = best(() => {
  for (const l of lines) if (l.text) JSON.parse(l.text);
});
const translateMs = best(() => {
  for (const l of lines) if (l.text) translateLine(l.text, l.bytes);
});
const sessionMs = best(() => {
  const session = new Session();
  session.processStarted();
  for (const l of lines) if (l.text) session.onEvents(translateLine(l.text, l.bytes), 0);
});
const readMs = best(() => readLines(stdoutPath));
console.log(`stdout log: ${(stdoutBytes / 1048576).toFixed(1)} MB, ${lines.length} lines`);
console.log(`  JSON.parse                 ${parseMs.toFixed(0)} ms  ${mb(stdoutBytes, parseMs)}`);
console.log(
  `  translateLine              ${translateMs.toFixed(0)} ms  ${mb(stdoutBytes, translateMs)}  ratio ${(translateMs / parseMs).toFixed(2)}x`,
);
console.log(
  `  translateLine + session    ${sessionMs.toFixed(0)} ms  ${mb(stdoutBytes, sessionMs)}  ratio ${(sessionMs / parseMs).toFixed(2)}x`,
);
console.log(`  reader (whole lines)       ${readMs.toFixed(0)} ms  ${mb(stdoutBytes, readMs)}`);

// 2. Transcript tail on a 50 MB JSONL (read from 0, every line parsed and handed over).
const configDir = join(root, 'c');
const cwd = '/srv/bench';
const projects = join(configDir, 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'));
mkdirSync(projects, { recursive: true });
const transcriptBytes = buildLog('.transcript.jsonl', join(projects, 'bench.jsonl'));
const transcriptText = readFileSync(join(projects, 'bench.jsonl'), 'utf8');
const plainMs = best(() => {
  for (const line of transcriptText.split('\n')) if (line) JSON.parse(line);
});
let seen = 0;
const tailOf = (options) => () => {
  seen = 0;
  const tail = new TranscriptTail({ configDir, cwd, sessionId: 'bench', onLine: () => seen++, ...options });
  tail.rescan();
  tail.stop();
};
const tailMs = best(tailOf({}));
const allSeen = seen;
// As the bridge runs it: only lines that can make a history entry are parsed (`mayBeHistory`).
const filteredMs = best(tailOf({ acceptBytes: mayBeHistory }));
console.log(
  `transcript: ${(transcriptBytes / 1048576).toFixed(1)} MB, ${allSeen} lines (${transcriptText.split('\n').filter(Boolean).length} in the file; lines over 2 MiB skipped unparsed)`,
);
console.log(`  split + JSON.parse         ${plainMs.toFixed(0)} ms  ${mb(transcriptBytes, plainMs)}`);
console.log(
  `  TranscriptTail             ${tailMs.toFixed(0)} ms  ${mb(transcriptBytes, tailMs)}  ratio ${(tailMs / plainMs).toFixed(2)}x`,
);
console.log(
  `  TranscriptTail, filtered   ${filteredMs.toFixed(0)} ms  ${mb(transcriptBytes, filteredMs)}  ratio ${(filteredMs / plainMs).toFixed(2)}x (${seen} lines parsed)`,
);

// 3. Resident memory of a bridge process, idle and while a turn streams ~5 MB of deltas.
const socketPath = join(root, 'g.sock');
let textFrames = 0;
let firstEnded;
const turnEnded = new Promise((resolve) => (firstEnded = resolve));
/** Turn ids (`<chat>/…`, the conversation's key first) → who waits for that conversation's end. */
const fourEnded = new Map();
const ended = (frame) => {
  const chat = frame.turnId.split('/')[0];
  if (chat === '1') firstEnded();
  else fourEnded.get(chat)?.();
};
let statusAnswered;
const statusAnswer = new Promise((resolve) => (statusAnswered = resolve));
const server = createProtocolServer({
  socketPath,
  agent: 'bench',
  store: createMemoryChannelStore(),
  onFrame(frame) {
    if (frame.type === 'text') textFrames++;
    if (frame.type === 'turn_ended') ended(frame);
    if (frame.type === 'status' && frame.commandId === 'bench-status') statusAnswered(frame);
  },
});
await server.start();
const fakeBin = join(root, 'fake-claude');
writeFileSync(
  fakeBin,
  `#!/bin/sh\nexec "${process.execPath}" "${new URL('./fake-claude.mjs', import.meta.url).pathname}"\n`,
  { mode: 0o755 },
);
const workDir = join(root, 'w');
mkdirSync(workDir);
const bridge = spawn(
  process.execPath,
  [new URL('../../../tests/bridge/bridge-entry.mjs', import.meta.url).pathname],
  {
    env: {
      ...process.env,
      // The fake CLI writes a transcript here, which the bridge tails while the answer streams.
      CLAUDE_CONFIG_DIR: join(root, 'claude'),
      BRIDGE_OPTIONS: JSON.stringify({
        agent: 'bench',
        socketPath,
        stateDir: join(root, 's'),
        workDir,
        claudeBin: fakeBin,
        restartOnExit: false,
        stuckAfterMs: 60_000,
      }),
    },
    stdio: ['ignore', 'pipe', 'ignore'],
  },
);
await new Promise((resolve) => bridge.stdout.once('data', resolve));
const rss = () =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${bridge.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
await new Promise((resolve) => setTimeout(resolve, 1500));
const idle = rss();
let peak = 0;
const sampler = setInterval(() => (peak = Math.max(peak, rss())), 50);
await server.send({
  type: 'user_message',
  inboundId: 'bench-1',
  route: { chatId: 1 },
  telegramMessageId: 1,
  sender: { id: 1, name: 'bench' },
  text: 'stream',
  attachments: [],
  sentAt: Date.now(),
});
await turnEnded;
clearInterval(sampler);
await new Promise((resolve) => setTimeout(resolve, 300));
await server.send({ type: 'status_request', commandId: 'bench-status', route: { chatId: 1 } });
const history = (await statusAnswer).history ?? [];
const transcriptDir = join(root, 'claude', 'projects', workDir.replace(/[^a-zA-Z0-9]/g, '-'));
const written = readdirSync(transcriptDir).reduce(
  (n, f) => n + readFileSync(join(transcriptDir, f)).length,
  0,
);
console.log(
  `bridge RSS: idle ${idle.toFixed(1)} MB, streaming peak ${peak.toFixed(1)} MB (text frames: ${textFrames}; transcript tailed meanwhile: ${(written / 1048576).toFixed(1)} MB, history entries: ${history.length})`,
);

// Four conversations streaming at once: four processes, one bridge.
let peak4 = 0;
const sampler4 = setInterval(() => (peak4 = Math.max(peak4, rss())), 50);
const ends = [2, 3, 4, 5].map((chatId) => {
  const done = new Promise((resolve) => fourEnded.set(`${chatId}`, resolve));
  void server.send({
    type: 'user_message',
    inboundId: `bench-4-${chatId}`,
    route: { chatId },
    telegramMessageId: chatId,
    sender: { id: 1, name: 'bench' },
    text: 'stream',
    attachments: [],
    sentAt: Date.now(),
  });
  return done;
});
await Promise.all(ends);
clearInterval(sampler4);
console.log(
  `bridge RSS with 4 conversations streaming at once: peak ${peak4.toFixed(1)} MB (1 conversation: ${peak.toFixed(1)} MB; the CLI processes not included)`,
);
bridge.kill('SIGKILL');
for (const { record } of recordedProcesses(join(root, 's'))) {
  try {
    process.kill(-record.pid, 'SIGKILL');
  } catch {
    // gone
  }
}
await server.stop();
rmSync(root, { recursive: true, force: true });
