// A stand-in CLI for the memory benchmark: for every stdin line it replays the recorded streamed answer,
// its text deltas repeated so one turn streams about 5 MB, and meanwhile appends the recorded transcript
// (about 5 MB in all) to the session file the bridge tails. Not a model of the CLI beyond that.
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const lines = readFileSync(new URL('../test/fixtures/streamed-answer.stdout.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter(Boolean);
const deltas = lines.filter((l) => l.includes('"text_delta"'));
const head = lines.filter(
  (l) => !l.includes('"text_delta"') && !l.includes('"type":"assistant"') && !l.includes('"type":"result"'),
);
const tail = lines.filter((l) => l.includes('"type":"assistant"') || l.includes('"type":"result"'));
const sessionId = JSON.parse(lines.find((l) => l.includes('"subtype":"init"')) ?? '{}').session_id;
const transcript = readFileSync(
  new URL('../test/fixtures/streamed-answer.transcript.jsonl', import.meta.url),
  'utf8',
);
const projects = join(
  process.env.CLAUDE_CONFIG_DIR ?? '/nonexistent',
  'projects',
  process.cwd().replace(/[^a-zA-Z0-9]/g, '-'),
);
const appendTranscript = () => {
  if (!process.env.CLAUDE_CONFIG_DIR || !sessionId) return;
  mkdirSync(projects, { recursive: true });
  appendFileSync(join(projects, `${sessionId}.jsonl`), transcript);
};
const write = (line) => new Promise((resolve) => process.stdout.write(`${line}\n`, resolve));
for await (const _ of createInterface({ input: process.stdin })) {
  for (const line of head) await write(line);
  const rounds = 5_000_000 / deltas.join('').length;
  // About 5 MB of transcript over the turn (BENCH_TRANSCRIPT_MB), in the recorded transcript's pieces.
  const transcriptBytes = Number(process.env.BENCH_TRANSCRIPT_MB ?? 5) * 1_000_000;
  const every = Math.max(1, Math.round(rounds / (transcriptBytes / transcript.length)));
  for (let i = 0; i < rounds; i++) {
    for (const line of deltas) await write(line);
    if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    if (i % every === 0) appendTranscript();
  }
  for (const line of tail) await write(line);
}
