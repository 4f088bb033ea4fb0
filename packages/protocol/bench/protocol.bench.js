// Protocol benchmark: one run, one Unix socket per variant, the same frames for all.
//   (a) this protocol: length-prefixed msgpack, decoded and validated with parseFrame
//   (b) newline-delimited JSON, decoded and validated with the same parseFrame
//   (c) raw bytes: the same encoded bytes written and counted, no codec, no validation (the floor)
// Reports frames/s and round-trip p50/p99 for each, and the ratios the foundation issue sets as goals:
// (a) >= 1.5x the throughput of (b); (a)'s per-frame cost within 2x of (c).
// Run: pnpm build && node packages/protocol/bench/protocol.bench.js   (or `pnpm bench`)
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFrame, FrameDecoder, parseFrame } from '../dist/index.js';

const FRAMES = Number(process.env.BENCH_FRAMES ?? 20_000);
const ROUND_TRIPS = Number(process.env.BENCH_ROUND_TRIPS ?? 2_000);

/** A realistic mix: mostly small deltas and tool events, some 100 KB tool outputs. */
function makeMix(n) {
  const frames = [];
  const big = 'line of tool output, with some text in it\n'.repeat(2_500).slice(0, 100_000);
  for (let i = 0; i < n; i++) {
    const r = i % 100;
    if (r === 99) {
      frames.push({
        type: 'tool_finished',
        seq: i + 1,
        turnId: 'turn-1',
        toolUseId: `toolu_${i}`,
        isError: true,
        errorText: big.slice(0, 4000),
      });
      frames.push({ type: 'text', seq: i + 1, turnId: 'turn-1', blockId: `msg_${i}:0`, text: big });
    } else if (r % 10 === 0) {
      frames.push({
        type: 'tool_started',
        seq: i + 1,
        turnId: 'turn-1',
        toolUseId: `toolu_${i}`,
        name: 'Bash',
        input: {
          command: `grep -rn "createGateway" packages/ --include=*.ts | head -${i % 50}`,
          description: 'Find the gateway factory',
        },
      });
    } else {
      frames.push({
        type: 'text_delta',
        turnId: 'turn-1',
        blockId: `msg_${i >> 4}:0`,
        delta: ' the quick brown fox jumps',
      });
    }
  }
  return frames.slice(0, n);
}

const variants = {
  msgpack: {
    encode: (frame) => encodeFrame(frame),
    makeDecoder() {
      const decoder = new FrameDecoder();
      return (chunk, onFrame) => {
        for (const event of decoder.push(chunk)) {
          if (event.kind !== 'value') throw new Error(event.message);
          const parsed = parseFrame(event.value);
          if (!parsed.ok) throw new Error(parsed.message);
          onFrame(parsed.frame);
        }
      };
    },
  },
  ndjson: {
    encode: (frame) => Buffer.from(`${JSON.stringify(frame)}\n`),
    makeDecoder() {
      let rest = '';
      return (chunk, onFrame) => {
        const text = rest + chunk.toString('utf8');
        let start = 0;
        for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
          const parsed = parseFrame(JSON.parse(text.slice(start, nl)));
          if (!parsed.ok) throw new Error(parsed.message);
          onFrame(parsed.frame);
          start = nl + 1;
        }
        rest = text.slice(start);
      };
    },
  },
};

async function socketPair(path) {
  const accepted = new Promise((resolve) => {
    const server = net.createServer((socket) => resolve({ socket, server }));
    server.listen(path);
  });
  const client = net.connect(path);
  await new Promise((resolve) => client.once('connect', resolve));
  const { socket, server } = await accepted;
  return {
    sender: client,
    receiver: socket,
    close() {
      client.destroy();
      socket.destroy();
      server.close();
    },
  };
}

/** Throughput: the sender encodes and writes every frame (respecting backpressure); the receiver decodes all. */
async function throughput(path, frames, variant) {
  const { sender, receiver, close } = await socketPair(path);
  const started = process.hrtime.bigint();
  let received = 0;
  const done = new Promise((resolve, reject) => {
    if (variant === 'raw') {
      const total = rawBytes(frames);
      let bytes = 0;
      receiver.on('data', (chunk) => {
        bytes += chunk.length;
        if (bytes >= total) resolve();
      });
    } else {
      const decode = variants[variant].makeDecoder();
      receiver.on('data', (chunk) => {
        try {
          decode(chunk, () => {
            received++;
            if (received === frames.length) resolve();
          });
        } catch (err) {
          reject(err);
        }
      });
    }
  });
  const encoded = variant === 'raw' ? rawEncoded(frames) : undefined;
  // Written the way the protocol's connection writes: corked per tick, waiting for drain when told to.
  let corked = false;
  for (let i = 0; i < frames.length; i++) {
    const bytes = encoded ? encoded[i] : variants[variant].encode(frames[i]);
    if (!corked) {
      corked = true;
      sender.cork();
      process.nextTick(() => {
        corked = false;
        sender.uncork();
      });
    }
    if (!sender.write(bytes)) await new Promise((resolve) => sender.once('drain', resolve));
  }
  await done;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  close();
  return frames.length / seconds;
}

const rawCache = new WeakMap();
function rawEncoded(frames) {
  if (!rawCache.has(frames))
    rawCache.set(
      frames,
      frames.map((frame) => encodeFrame(frame)),
    );
  return rawCache.get(frames);
}
function rawBytes(frames) {
  return rawEncoded(frames).reduce((sum, b) => sum + b.length, 0);
}

/** Latency: one frame at a time, echoed back by the receiver after decoding (and re-encoding). */
async function roundTrips(path, frames, variant) {
  const { sender, receiver, close } = await socketPair(path);
  const samples = [];
  if (variant === 'raw') {
    let expect = 0;
    let got = 0;
    receiver.on('data', (chunk) => receiver.write(chunk));
    let resolveOne;
    sender.on('data', (chunk) => {
      got += chunk.length;
      if (got >= expect) resolveOne();
    });
    const encoded = rawEncoded(frames);
    for (let i = 0; i < frames.length; i++) {
      const bytes = encoded[i];
      expect = bytes.length;
      got = 0;
      const t0 = process.hrtime.bigint();
      await new Promise((resolve) => {
        resolveOne = resolve;
        sender.write(bytes);
      });
      samples.push(Number(process.hrtime.bigint() - t0) / 1e3);
    }
  } else {
    const { encode, makeDecoder } = variants[variant];
    const decodeAtReceiver = makeDecoder();
    receiver.on('data', (chunk) => decodeAtReceiver(chunk, (frame) => receiver.write(encode(frame))));
    const decodeAtSender = makeDecoder();
    let resolveOne;
    sender.on('data', (chunk) => decodeAtSender(chunk, () => resolveOne()));
    for (let i = 0; i < frames.length; i++) {
      const t0 = process.hrtime.bigint();
      await new Promise((resolve) => {
        resolveOne = resolve;
        sender.write(encode(frames[i]));
      });
      samples.push(Number(process.hrtime.bigint() - t0) / 1e3);
    }
  }
  close();
  samples.sort((a, b) => a - b);
  const at = (q) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))];
  return { p50: at(0.5), p99: at(0.99) };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'sy-bench-'));
  const frames = makeMix(FRAMES);
  const trips = makeMix(ROUND_TRIPS);
  const results = {};
  try {
    // Warm up every variant on the full mix (so the JIT has seen every frame shape and the big frames),
    // then interleave measured runs so machine noise hits all variants alike.
    for (const variant of ['msgpack', 'ndjson', 'raw']) {
      await throughput(join(dir, `w-${variant}`), frames, variant);
      await roundTrips(join(dir, `wl-${variant}`), trips.slice(0, 500), variant);
    }
    const rounds = 5;
    for (let round = 0; round < rounds; round++) {
      for (const variant of ['msgpack', 'ndjson', 'raw']) {
        const fps = await throughput(join(dir, `t-${variant}-${round}`), frames, variant);
        const lat = await roundTrips(join(dir, `l-${variant}-${round}`), trips, variant);
        results[variant] ??= { fps: [], p50: [], p99: [] };
        const r = results[variant];
        r.fps.push(fps);
        r.p50.push(lat.p50);
        r.p99.push(lat.p99);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const row = (name, key) => {
    const r = results[key];
    return `${name.padEnd(34)} ${Math.round(median(r.fps)).toString().padStart(9)} frames/s   p50 ${median(r.p50).toFixed(1).padStart(6)} µs   p99 ${median(r.p99).toFixed(1).padStart(7)} µs`;
  };
  const a = median(results.msgpack.fps);
  const b = median(results.ndjson.fps);
  const c = median(results.raw.fps);
  console.log(
    `protocol benchmark: ${FRAMES} frames (mix: 89% deltas, 10% tool events, 1% 100 KB outputs), median of 5`,
  );
  console.log(row('(a) msgpack + validation', 'msgpack'));
  console.log(row('(b) NDJSON + same validation', 'ndjson'));
  console.log(row('(c) raw bytes, no codec (floor)', 'raw'));
  console.log(`throughput (a)/(b): ${(a / b).toFixed(2)}x   (goal >= 1.5x)`);
  console.log(`per-frame cost (a)/(c): ${(c / a).toFixed(2)}x   (goal <= 2x)`);
}

await main();
