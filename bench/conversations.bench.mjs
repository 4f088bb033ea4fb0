// What a live conversation costs in memory: Switchyard's share (the bridge's growth per conversation,
// plus any process Switchyard starts beside `claude`) next to Claude's own (`claude` and what it
// starts), with 1 and then 4 conversations live. Goal: Switchyard's share under 10 MB a conversation.
//   npx -y pnpm@12.4.2 build && node bench/conversations.bench.mjs
// It runs one bridge process (tests/bridge/bridge-entry.mjs) against the pinned CLI and the sandbox's
// scripted Messages API on 127.0.0.1, starts each conversation with one answered turn (so its MCP
// servers are connected), lets things settle, and reads VmRSS from /proc. A process counts as
// Switchyard's when its command line names this checkout (the bridge's old stdio MCP helper did); the
// rest of `claude`'s process tree is Claude's. RSS includes shared pages (the node and claude binaries),
// so each process is charged in full, as `ps` shows it. SWITCHYARD_CHECKOUT=<other checkout> measures that
// checkout's build instead (for a before/after).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = process.env.SWITCHYARD_CHECKOUT ?? fileURLToPath(new URL('..', import.meta.url));
const { createMemoryChannelStore, createProtocolServer } = await import(
  join(root, 'packages/protocol/dist/index.js')
);
const { recordedProcesses } = await import(join(root, 'packages/agent-bridge/dist/index.js'));
const { createScriptedModel, rule, say } = await import(join(root, 'packages/sandbox/dist/index.js'));
const claudeBin = realpathSync(join(root, 'node_modules/.bin/claude'));

const dir = mkdtempSync(join(tmpdir(), 'sy-cbench-'));
const workDir = join(dir, 'w');
const stateDir = join(dir, 's');
for (const d of [workDir, stateDir, join(dir, 'c')]) mkdirSync(d);
const model = createScriptedModel({ script: [rule('hello', say('Hello.'))] });
const { baseUrl } = await model.start();
const ends = new Map();
const server = createProtocolServer({
  socketPath: join(dir, 'g.sock'),
  agent: 'bench',
  store: createMemoryChannelStore(),
  onFrame(frame) {
    if (frame.type === 'turn_ended') ends.get(frame.turnId.split('/')[0])?.();
  },
});
await server.start();
const bridge = spawn(process.execPath, [join(root, 'tests/bridge/bridge-entry.mjs')], {
  env: {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    BRIDGE_OPTIONS: JSON.stringify({
      agent: 'bench',
      socketPath: join(dir, 'g.sock'),
      stateDir,
      workDir,
      claudeBin,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: dir,
        CLAUDE_CONFIG_DIR: join(dir, 'c'),
        ANTHROPIC_BASE_URL: baseUrl,
        ANTHROPIC_API_KEY: 'sk-test',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
      },
      maxLiveSessions: 4,
      restartOnExit: false,
      stuckAfterMs: 60_000,
    }),
  },
  stdio: ['ignore', 'pipe', 'ignore'],
});
await new Promise((resolve) => bridge.stdout.once('data', resolve));

/** pid → { ppid, rssMb, command } for every live process. */
const processes = () => {
  const found = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      const ppid = Number(/PPid:\s+(\d+)/.exec(status)?.[1]);
      const rssMb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
      const command = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ');
      found.set(Number(name), { ppid, rssMb, command });
    } catch {
      // exited while we looked
    }
  }
  return found;
};
/** The claude processes the bridge recorded, each with its process tree split into Claude's and Switchyard's. */
const measure = () => {
  const all = processes();
  const tree = (pid) => [
    pid,
    ...[...all].filter(([, p]) => p.ppid === pid).flatMap(([child]) => tree(child)),
  ];
  let claude = 0;
  let helpers = 0;
  const claudes = recordedProcesses(stateDir).map(({ record }) => record.pid);
  for (const pid of claudes) {
    for (const member of tree(pid)) {
      const p = all.get(member);
      if (!p) continue;
      if (member !== pid && p.command.includes(root)) helpers += p.rssMb;
      else claude += p.rssMb;
    }
  }
  return { bridge: all.get(bridge.pid)?.rssMb ?? 0, claude, helpers, live: claudes.length };
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** After things settle: the median of five samples half a second apart (the bridge's heap breathes). */
const settled = async () => {
  await sleep(2000);
  const samples = [];
  for (let i = 0; i < 5; i++) {
    samples.push(measure());
    await sleep(500);
  }
  const of = (key) => median(samples.map((s) => s[key]));
  return { bridge: of('bridge'), claude: of('claude'), helpers: of('helpers'), live: of('live') };
};
const start = (chatId) => {
  const done = new Promise((resolve) => ends.set(`${chatId}`, resolve));
  void server.send({
    type: 'user_message',
    inboundId: `bench-${chatId}`,
    route: { chatId },
    telegramMessageId: chatId,
    sender: { id: 1, name: 'bench' },
    text: 'hello',
    attachments: [],
    sentAt: Date.now(),
  });
  return done;
};

try {
  const idle = await settled();
  console.log(`bridge idle, no conversation: ${idle.bridge.toFixed(1)} MB RSS`);
  const rows = [];
  for (const [from, to] of [
    [1, 1],
    [2, 4],
  ]) {
    const chats = [];
    for (let chat = from; chat <= to; chat++) chats.push(chat);
    await Promise.all(chats.map(start));
    const m = await settled();
    if (m.live !== to) throw new Error(`expected ${to} live claude processes, found ${m.live}`);
    const switchyard = (m.bridge - idle.bridge + m.helpers) / to;
    rows.push({ n: to, switchyard, claude: m.claude / to, bridge: m.bridge, helpers: m.helpers });
  }
  console.log('live   Switchyard per conversation   Claude per conversation   (bridge RSS, helpers RSS)');
  for (const r of rows) {
    console.log(
      `  ${r.n}      ${r.switchyard.toFixed(1).padStart(6)} MB                 ${r.claude.toFixed(1).padStart(6)} MB              (${r.bridge.toFixed(1)} MB, ${r.helpers.toFixed(1)} MB)`,
    );
  }
  if (rows.some((r) => r.switchyard < 0)) {
    console.log(
      '  (below zero: the bridge collected garbage between the idle sample and this one; noise of a few MB)',
    );
  }
  const worst = Math.max(...rows.map((r) => r.switchyard));
  console.log(`Switchyard's own cost per live conversation: at most ${worst.toFixed(1)} MB (goal < 10 MB)`);
} finally {
  bridge.kill('SIGKILL');
  for (const { record } of recordedProcesses(stateDir)) {
    try {
      process.kill(-record.pid, 'SIGKILL');
    } catch {
      try {
        process.kill(record.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
  await server.stop();
  await model.stop();
  rmSync(dir, { recursive: true, force: true });
}
