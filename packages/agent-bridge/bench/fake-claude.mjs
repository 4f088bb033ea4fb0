// A stand-in CLI for the memory benchmark: for every stdin line it replays the recorded streamed answer,
// its text deltas repeated so one turn streams about 5 MB. Not a model of the CLI beyond that.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const lines = readFileSync(new URL('../test/fixtures/streamed-answer.stdout.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter(Boolean);
const deltas = lines.filter((l) => l.includes('"text_delta"'));
const head = lines.filter(
  (l) => !l.includes('"text_delta"') && !l.includes('"type":"assistant"') && !l.includes('"type":"result"'),
);
const tail = lines.filter((l) => l.includes('"type":"assistant"') || l.includes('"type":"result"'));
const write = (line) => new Promise((resolve) => process.stdout.write(`${line}\n`, resolve));
for await (const _ of createInterface({ input: process.stdin })) {
  for (const line of head) await write(line);
  for (let i = 0; i < 5_000_000 / deltas.join('').length; i++) {
    for (const line of deltas) await write(line);
    if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  for (const line of tail) await write(line);
}
