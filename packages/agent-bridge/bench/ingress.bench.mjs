// Ingress overhead: a user's message to the model request it causes, through Switchyard against the same
// warm CLI fed directly, medians in one run (goal: Switchyard at most 2 ms over the bare CLI).
//   npx tsc -b && node packages/agent-bridge/bench/ingress.bench.mjs
// Switchyard: the built gateway and bridge as processes (`switchyard gateway|bridge`, as the units run
// them) against the stand-in Telegram, timed from the stand-in answering the `getUpdates` that hands the
// update out (its response written; the stand-in's own work before that is not Switchyard's) to the
// scripted Messages API receiving the request. The scripted API runs in a worker thread
// (`model-worker.mjs`): in this thread the stand-in Telegram serves the gateway's calls of the turn, and
// would make the request's arrival wait behind them.
// Bare: a second CLI fed the way the bridge feeds its own, so that the difference is Switchyard and not a
// configuration: the command line and environment of the bridge's running CLI (read from /proc: the same
// flags, the same MCP config pointing at the bridge's live endpoint, the same `--allowedTools`), its own
// config directory and an empty working directory, stdin a fifo opened read-write and stdout a file (as
// `child.ts` does), and the line the bridge writes (a content array with the message header and a uuid).
// Timed from its write into the fifo to the request.
// Both are warm (one message first) and measured alternately, each message after the previous turn
// ended and the same pause (GAP_MS): a CLI's latency depends on how long it sat idle, and a shared
// machine's load drifts, so alternating keeps both sides under the same conditions.
// The transport floor, measured in the same loop after the same pause (see below): the two process hops
// Switchyard's path has beyond the bare CLI's, with nothing done in them. On a quiet machine that is a
// fraction of a millisecond; on a small VM whose idle vCPUs sleep it is milliseconds, and no code in
// either service can make it less.
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTelegramServer, scriptedClaudeEnv } from '../../sandbox/dist/index.js';
import { CLAUDE_STREAM_ARGS, recordedProcesses } from '../dist/index.js';
import { startModelThread } from './model-thread.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 41);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 200);
const root = fileURLToPath(new URL('../../../', import.meta.url));
const CLAUDE = join(root, 'node_modules/.bin/claude');
const MAIN = join(root, 'packages/cli/dist/main.js');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const dir = mkdtempSync(join(tmpdir(), 'sy-ingress-'));
const model = await startModelThread();
const { baseUrl, requestFor } = model;

// --- Switchyard -----------------------------------------------------------------------------------------
const telegram = createTelegramServer({ token: '4243:ingress-bench-token-0000000000000', rateLimits: false });
const { apiRoot } = await telegram.start();
const work = join(dir, 'work');
mkdirSync(work);
const stateDir = join(dir, 'state');
const config = join(dir, 'switchyard.yaml');
writeFileSync(
  config,
  JSON.stringify({
    agents: [
      {
        name: 'ingress',
        token: telegram.token,
        apiRoot,
        allow: [telegram.defaultUser.id],
        workDir: work,
        stateDir,
        runtimeDir: join(dir, 'run'),
        card: { showDelayMs: 600_000 },
        claude: { bin: CLAUDE, env: scriptedClaudeEnv({ baseUrl, configDir: join(dir, 'sy-config') }) },
      },
    ],
  }),
);
const services = ['gateway', 'bridge'].map((service) =>
  spawn(process.execPath, [MAIN, '--config', config, service, 'ingress'], {
    env: { ...process.env, SWITCHYARD_LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  }),
);
let deliveredAt = 0;
let handedOut = false;
telegram.subscribe((event) => {
  // The `getUpdates` that took the update is recorded just before its response is written.
  if (event.type === 'updates_delivered') handedOut = true;
  else if (handedOut && event.type === 'api_call' && event.call.method === 'getUpdates') {
    handedOut = false;
    deliveredAt = performance.now();
  }
});
const chatId = telegram.privateChat().id;
const answers = () => telegram.messages(chatId).filter((m) => m.from === 'bot' && m.text === 'ok').length;
/** One message through Switchyard; resolves with its latency once its answer is in the chat. */
const throughSwitchyard = async (i) => {
  const token = `ingress switchyard ${i}`;
  const before = answers();
  telegram.sendText(chatId, token);
  const at = await requestFor(token);
  const ms = at - deliveredAt;
  await telegram.waitFor(() => answers() > before || undefined, { timeoutMs: 60_000 });
  return ms;
};
await throughSwitchyard('warm');

// --- the bare CLI, started as the bridge started its own ------------------------------------------------
const recorded = recordedProcesses(join(stateDir, 'bridge'))[0]?.record;
if (!recorded) throw new Error('the bridge recorded no Claude process');
const argv = readFileSync(`/proc/${recorded.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
const args = argv.slice(argv.indexOf(CLAUDE_STREAM_ARGS[0]));
const environ = Object.fromEntries(
  readFileSync(`/proc/${recorded.pid}/environ`, 'utf8')
    .split('\0')
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
const bareWork = join(dir, 'bare');
mkdirSync(bareWork);
const fifo = join(dir, 'bare-stdin');
execFileSync('mkfifo', ['-m', '600', fifo]);
const stdoutPath = join(dir, 'bare-stdout.log');
const readWrite = openSync(fifo, constants.O_RDWR);
const stdoutFd = openSync(stdoutPath, 'w', 0o600);
const cli = spawn(CLAUDE, args, {
  cwd: bareWork,
  env: { ...environ, CLAUDE_CONFIG_DIR: join(dir, 'bare-config') },
  detached: true,
  stdio: [readWrite, stdoutFd, 'ignore'],
});
closeSync(readWrite);
closeSync(stdoutFd);
const stdin = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
const stdout = openSync(stdoutPath, 'r');
let offset = 0;
/** Turns the bare CLI has finished (its `result` lines), read from its stdout file. */
const results = () => {
  const size = fstatSync(stdout).size;
  if (size > offset) {
    const buf = Buffer.alloc(size - offset);
    readSync(stdout, buf, 0, buf.length, offset);
    offset = size;
    results.count += buf
      .toString('utf8')
      .split('\n')
      .filter((l) => l.includes('"type":"result"')).length;
  }
  return results.count;
};
results.count = 0;
/** One message into the bare CLI, in the bridge's form; resolves with its latency once its turn ended. */
const bare = async (i) => {
  const token = `ingress bare ${i}`;
  const before = results();
  const inbound = randomUUID();
  const text = `[telegram chat=${chatId} msg=${1000 + i} from="Ingress" inbound=${inbound}]\n${token}`;
  const line = JSON.stringify({
    type: 'user',
    message: { role: 'user', content: [{ type: 'text', text }] },
    uuid: randomUUID(),
  });
  const sentAt = performance.now();
  writeSync(stdin, `${line}\n`);
  const at = await requestFor(token);
  while (results() === before) await sleep(5);
  return at - sentAt;
};
await bare('warm');

// --- the transport floor: an idle peer polling over HTTP and writing to a Unix socket -----------------
// (`floor-peer.mjs`): a getUpdates long poll answered here with one update, grammY's client parsing it in
// the peer, and the peer's one byte back on a socket — the two process hops Switchyard's path has beyond
// the bare CLI's, with none of its work. Measured in the same loop, after the same pause.
const floorSocketPath = join(dir, 'floor.sock');
const floorSockets = createServer();
await new Promise((resolve) => floorSockets.listen(floorSocketPath, resolve));
/** The peer's long poll waiting for an answer, if one is waiting. */
let floorPoll;
let floorUpdateId = 1;
const floorHttp = createHttpServer((req, res) => {
  req.resume();
  req.on('end', () => {
    floorPoll = res;
  });
});
await new Promise((resolve) => floorHttp.listen(0, '127.0.0.1', resolve));
const floorPeer = spawn(
  process.execPath,
  [
    fileURLToPath(new URL('./floor-peer.mjs', import.meta.url)),
    `http://127.0.0.1:${floorHttp.address().port}`,
    floorSocketPath,
  ],
  { stdio: 'ignore' },
);
const floorSocket = await new Promise((resolve) => floorSockets.once('connection', resolve));
/** One update handed to the idle peer, until its byte is back. */
const throughFloor = async () => {
  while (!floorPoll) await sleep(1);
  const res = floorPoll;
  floorPoll = undefined;
  const body = JSON.stringify({
    ok: true,
    result: [
      {
        update_id: floorUpdateId++,
        message: { message_id: 1, date: 0, chat: { id: 1, type: 'private' }, text: 'floor' },
      },
    ],
  });
  const sentAt = performance.now();
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
  await new Promise((resolve) => floorSocket.once('data', resolve));
  return performance.now() - sentAt;
};
await throughFloor();

// --- alternately -----------------------------------------------------------------------------------------
const switchyardMs = [];
const bareMs = [];
const floorMs = [];
for (let i = 0; i < RUNS; i++) {
  await sleep(GAP_MS);
  switchyardMs.push(await throughSwitchyard(i));
  await sleep(GAP_MS);
  bareMs.push(await bare(i));
  await sleep(GAP_MS);
  floorMs.push(await throughFloor());
}

floorPeer.kill('SIGKILL');
floorHttp.closeAllConnections();
floorHttp.close();
floorSockets.close();

process.kill(-cli.pid, 'SIGKILL');
closeSync(stdin);
closeSync(stdout);
for (const child of services) child.kill('SIGTERM');
await Promise.all(services.map((child) => new Promise((resolve) => child.once('exit', resolve))));
// The bridge leaves claude running by design; end it.
await new Promise((resolve) =>
  spawn(process.execPath, [MAIN, '--config', config, 'stop-claude', 'ingress'], { stdio: 'ignore' }).once(
    'exit',
    resolve,
  ),
);
await telegram.stop();
await model.stop();
rmSync(dir, { recursive: true, force: true });

const bareMedian = median(bareMs);
const throughMedian = median(switchyardMs);
const floorMedian = median(floorMs);
// Each message through Switchyard against the bare one right after it: the pairs share the machine's
// load of that moment, which the two medians apart do not.
const pairedMedian = median(switchyardMs.map((ms, i) => ms - (bareMs[i] ?? ms)));
console.log(
  JSON.stringify(
    {
      runs: RUNS,
      gapMs: GAP_MS,
      bareCliMs: +bareMedian.toFixed(2),
      switchyardMs: +throughMedian.toFixed(2),
      overheadMs: +(throughMedian - bareMedian).toFixed(2),
      pairedOverheadMs: +pairedMedian.toFixed(2),
      ratio: +(throughMedian / bareMedian).toFixed(2),
      transportFloorMs: +floorMedian.toFixed(2),
      overheadBeyondFloorMs: +(throughMedian - bareMedian - floorMedian).toFixed(2),
      bareCliAll: bareMs.map((x) => +x.toFixed(1)),
      switchyardAll: switchyardMs.map((x) => +x.toFixed(1)),
      goal: 'overhead ≤ 2 ms',
      met: throughMedian - bareMedian <= 2,
    },
    null,
    2,
  ),
);
