// Files the agent sends: a 20 MB document from the tool call to Telegram's acknowledgement, against a
// plain grammY `sendDocument` of the same file to the same server in the same run (goal: ≤ 1.3x).
//   npx tsc -b && node packages/gateway/bench/files.bench.mjs
// The measured path is what happens when the model calls `send_file`: the JSON-RPC call `claude` makes
// on the bridge's MCP endpoint (HTTP on 127.0.0.1), the file checked and copied into the outbox area
// (file-outbox.js), a `file_send` frame over the protocol socket, the real gateway recording it in
// SQLite and uploading the copy through its courier to the sandbox Bot API (real HTTP on 127.0.0.1),
// and `file_sent` back to the bridge, which answers the call. Only `claude` itself is left out.
// Samples alternate between the two, each in a fresh chat (no send budget on
// either side), medians are reported. Everything runs in this one process, so the two sides compete
// for one event loop that in production they do not share.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryChannelStore, createProtocolClient, silentLogger } from '@switchyard/protocol';
import { Bot, InputFile } from 'grammy';
// The file tools are the bridge's own (not in its package index): this bench reaches into its build.
import { createFileTools } from '../../agent-bridge/dist/io/mcp/file-tools.js';
import { createTelegramServer } from '../../sandbox/dist/index.js';
import { createGateway } from '../dist/index.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const SIZE = 20 * 1024 * 1024;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = mkdtempSync(join(tmpdir(), 'sy-fbench-'));
const work = join(dir, 'work');
const bridgeState = join(dir, 'b');
mkdirSync(work);
mkdirSync(bridgeState);
const file = join(work, 'artifact.bin');
writeFileSync(file, randomBytes(SIZE));

const tg = createTelegramServer({ rateLimits: false });
const { apiRoot } = await tg.start();
/** Each sample goes to a chat of its own, so neither side waits for a chat's send budget. */
let chatId = 0;
// The gateway lets the bridge address only chats the agent talked in: each user is allowed, and writes
// first in the tool's samples (see `viaTool`).
const users = Array.from({ length: 2 * (RUNS + 1) }, (_, i) => tg.addUser({ id: 9000 + i, firstName: 'u' }));
const freshChat = () => {
  chatId = tg.privateChat(users.shift()).id;
};
/** Chats whose first message reached the bridge's side. */
const talkedIn = new Set();
const socketPath = join(dir, 'g.sock');
const gateway = createGateway({
  agent: 'bench',
  token: tg.token,
  apiRoot,
  allowUsers: [tg.defaultUser.id, ...users.map((u) => u.id)],
  stateDir: join(dir, 'g'),
  socketPath,
  exchange: { dir: join(dir, 'files') },
});
await gateway.start();

let tools;
const channel = createProtocolClient({
  socketPath,
  agent: 'bench',
  store: createMemoryChannelStore(),
  onFrame: (frame) => {
    if (frame.type === 'file_sent') {
      tools.settle(frame);
    }
    if (frame.type === 'user_message') talkedIn.add(frame.route.chatId);
  },
  logger: silentLogger,
});
tools = createFileTools({
  stateDir: bridgeState,
  workDir: work,
  // The directory the gateway uploads from (both services are given the same one).
  exchange: { dir: join(dir, 'files') },
  emit: (frame) => {
    void channel.send(frame);
  },
  target: () => ({ route: { chatId } }),
  log: silentLogger,
});
await tools.start();
await channel.start();
/** Calls `send_file` as `claude` would, from the MCP config the file tools wrote; resolves with its answer. */
const { url, headers } = JSON.parse(readFileSync(join(bridgeState, 'mcp.json'), 'utf8')).mcpServers
  .switchyard;
const ask = async ({ paths }) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      ...headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'send_file', arguments: { path: paths[0] } },
    }),
  });
  const data = (await response.text())
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .at(-1);
  const { result } = JSON.parse(data.slice('data: '.length));
  return { ok: result.isError !== true, text: result.content[0].text };
};

const bot = new Bot(tg.token, { client: { apiRoot } });
const plain = async () => {
  freshChat();
  const started = performance.now();
  await bot.api.sendDocument(chatId, new InputFile(file, 'artifact.bin'));
  return performance.now() - started;
};
const viaTool = async () => {
  freshChat();
  tg.sendText(chatId, 'hi');
  while (!talkedIn.has(chatId)) await new Promise((resolve) => setTimeout(resolve, 5));
  const started = performance.now();
  const answer = await ask({ tool: 'send_file', paths: [file] });
  if (!answer.ok || !answer.text.startsWith('Sent')) throw new Error(`the tool call failed: ${answer.text}`);
  return performance.now() - started;
};

// One of each to warm up (JIT, page cache, SQLite file), not counted.
await plain();
await viaTool();
const a = [];
const b = [];
for (let i = 0; i < RUNS; i++) {
  a.push(await plain());
  b.push(await viaTool());
}
const documents = tg
  .chats()
  .flatMap((chat) => tg.messages(chat.id))
  .filter((m) => m.kind === 'document' && m.file?.size === SIZE);
if (documents.length !== 2 * (RUNS + 1))
  throw new Error(`expected ${2 * (RUNS + 1)} documents, got ${documents.length}`);

const base = median(a);
const tool = median(b);
console.log(`20 MB document, median of ${RUNS}:`);
console.log(`  grammY sendDocument            ${base.toFixed(0)} ms`);
console.log(`  send_file tool call → ack      ${tool.toFixed(0)} ms`);
console.log(`  ratio                          ${(tool / base).toFixed(2)}x (goal ≤ 1.3x)`);

await tools.stop();
await channel.stop();
await gateway.stop();
await tg.stop();
rmSync(dir, { recursive: true, force: true });
