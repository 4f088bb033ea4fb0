// Ingress overhead: a user's message to the model request it causes, through Switchyard against the same
// warm CLI fed directly, medians in one run (goal: Switchyard at most 2 ms over the bare CLI).
//   npx tsc -b && node packages/agent-bridge/bench/ingress.bench.mjs
// Bare: the pinned `claude` with the bridge's stream-json arguments, a user message written to its stdin,
// timed from the write to the scripted Messages API receiving the request. Switchyard: the built gateway
// and bridge as processes (`switchyard gateway|bridge`, as the units run them) against the stand-in
// Telegram, timed from the stand-in handing the update out (`getUpdates` answered) to the same request.
// Both sides are warm: one message first, then RUNS measured, each after the previous turn ended.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createScriptedModel,
  createTelegramServer,
  rule,
  say,
  scriptedClaudeEnv,
} from '../../sandbox/dist/index.js';
import { CLAUDE_STREAM_ARGS } from '../dist/index.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const root = fileURLToPath(new URL('../../../', import.meta.url));
const CLAUDE = join(root, 'node_modules/.bin/claude');
const MAIN = join(root, 'packages/cli/dist/main.js');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const dir = mkdtempSync(join(tmpdir(), 'sy-ingress-'));
/** When each request reached the scripted Messages API, by its index. */
const arrivedAt = [];
const model = createScriptedModel({
  script: [rule('ingress', say('ok'))],
  chunkSize: 64,
  onRequest: (request) => {
    arrivedAt[request.index] = performance.now();
  },
});
const { baseUrl } = await model.start();
/** When the main loop's request for the message ending in `token` arrived. */
const requestFor = async (token) => {
  const request = await model.waitForRequest(
    (r) => r.view?.kind === 'main' && r.view.userText.trim().endsWith(token),
    { timeoutMs: 60_000 },
  );
  return arrivedAt[request.index];
};

// --- the bare CLI -------------------------------------------------------------------------------------
const bareWork = join(dir, 'bare');
mkdirSync(bareWork);
const cli = spawn(CLAUDE, [...CLAUDE_STREAM_ARGS], {
  cwd: bareWork,
  env: {
    PATH: process.env.PATH,
    HOME: dir,
    ...scriptedClaudeEnv({ baseUrl, configDir: join(dir, 'bare-config') }),
  },
  stdio: ['pipe', 'pipe', 'ignore'],
});
let results = 0;
let buffered = '';
cli.stdout.on('data', (chunk) => {
  buffered += chunk;
  for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
    if (buffered.slice(0, nl).includes('"type":"result"')) results++;
    buffered = buffered.slice(nl + 1);
  }
});
const bare = [];
for (let i = 0; i <= RUNS; i++) {
  const token = `ingress bare ${i}`;
  const before = results;
  const sentAt = performance.now();
  cli.stdin.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: token } })}\n`);
  const at = await requestFor(token);
  if (i > 0) bare.push(at - sentAt);
  while (results === before) await sleep(5);
}
cli.kill('SIGKILL');

// --- through Switchyard -------------------------------------------------------------------------------
const telegram = createTelegramServer({ token: '4243:ingress-bench-token-0000000000000', rateLimits: false });
const { apiRoot } = await telegram.start();
const work = join(dir, 'work');
mkdirSync(work);
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
        stateDir: join(dir, 'state'),
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
telegram.subscribe((event) => {
  if (event.type === 'updates_delivered') deliveredAt = performance.now();
});
const chatId = telegram.privateChat().id;
const answers = () => telegram.messages(chatId).filter((m) => m.from === 'bot' && m.text === 'ok').length;
const through = [];
for (let i = 0; i <= RUNS; i++) {
  const token = `ingress switchyard ${i}`;
  const before = answers();
  telegram.sendText(chatId, token);
  const at = await requestFor(token);
  if (i > 0) through.push(at - deliveredAt);
  await telegram.waitFor(() => answers() > before || undefined, { timeoutMs: 60_000 });
  await sleep(200);
}
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

const bareMs = median(bare);
const throughMs = median(through);
console.log(
  JSON.stringify(
    {
      runs: RUNS,
      bareCliMs: +bareMs.toFixed(2),
      switchyardMs: +throughMs.toFixed(2),
      overheadMs: +(throughMs - bareMs).toFixed(2),
      ratio: +(throughMs / bareMs).toFixed(2),
      goal: 'overhead ≤ 2 ms',
      met: throughMs - bareMs <= 2,
    },
    null,
    2,
  ),
);
