// The cost of building a streamed reply: a 20,000-character answer arriving as 16-character deltas (as
// the CLI streams it), read the way the reply stream reads it — when an edit goes out, here every 32
// deltas (far more often than a chat's budget allows) — against the floor: one `join` of the same
// deltas. Both measured in this run, median of repeats. Goal: ≤ 2x. The builder this replaced (the
// whole reply re-joined at every delta) is measured too, for scale.
import { ReplyText } from '../dist/core/reply/reply-text.js';

const ANSWER = 20_000;
const CHUNK = 16;
const words = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor '.repeat(400);
const deltas = [];
for (let at = 0; at < ANSWER; at += CHUNK) deltas.push(words.slice(at, at + CHUNK));

let sink = 0;
const floor = () => {
  sink += deltas.join('').length;
};
const incremental = () => {
  const reply = new ReplyText();
  let latest = '';
  for (let i = 0; i < deltas.length; i++) {
    reply.delta('b1', deltas[i]);
    if (i % 32 === 31) latest = reply.text;
  }
  latest = reply.text;
  // What the final render reads: a flat string of the whole answer.
  sink += latest.length + latest.charCodeAt(latest.length - 1);
};
const quadratic = () => {
  const order = ['b1'];
  const parts = new Map();
  let latest = '';
  for (const d of deltas) {
    parts.set('b1', (parts.get('b1') ?? '') + d);
    latest = order
      .map((id) => parts.get(id) ?? '')
      .filter((t) => t.length > 0)
      .join('\n\n');
  }
  sink += latest.length;
};

function time(fn, rounds) {
  const samples = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < 20; i++) fn();
    samples.push(Number(process.hrtime.bigint() - start) / 20 / 1000);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

for (let i = 0; i < 50; i++) {
  floor();
  incremental();
  quadratic();
}
const f = time(floor, 31);
const inc = time(incremental, 31);
const quad = time(quadratic, 11);
console.log(`reply text, ${ANSWER} chars in ${deltas.length} deltas (median µs per answer):`);
console.log(`  one join of the deltas (floor)    ${f.toFixed(1)}`);
console.log(
  `  ReplyText, read at each edit      ${inc.toFixed(1)}  → ${(inc / f).toFixed(2)}x the floor (goal ≤ 2x)`,
);
console.log(`  re-join per delta (before)        ${quad.toFixed(1)}  → ${(quad / f).toFixed(1)}x the floor`);
if (sink === 0) console.log('');
