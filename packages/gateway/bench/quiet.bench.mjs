// A quiet, fast chat, measured against a floor. Build first:
//   npx tsc -b packages/gateway packages/sandbox && node packages/gateway/bench/quiet.bench.mjs
// Two bursts, the rhythm people type in, against the sandbox at Telegram's limits (its defaults):
//   group:   four messages to the bot, 300 ms apart;
//   private: three private chats, eight messages each within about a second.
// A scripted model plays the bridge here: a turn opens with the first message that finds its
// conversation idle, takes the messages that came meanwhile at its next step (150 ms in) and answers
// 150 ms later; what waits opens the next turn. The gateway (rich replies, its own process) is
// measured against a floor bot in the same harness: the same turns, but it sends only the answers
// (one sendMessage per turn, nothing else) at the same limits. Reported, with ratios from this run:
// Telegram calls that change a chat (sends, edits, reactions, deletes) per message the model read, and
// the time from the model's last answer to the chat settled (its last such call). 429s too.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryChannelStore, createProtocolClient } from '@switchyard/protocol';
// The sandbox is a sibling workspace package the gateway does not depend on; import its build by path.
import { createTelegramServer } from '../../sandbox/dist/index.js';
import { benchGatewayOptions, startBot } from './bench-bot.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const BOT = '@switchyard_sandbox_bot';
const STEP_MS = 150;
/** The calls that change what a chat shows (drafts and chat actions are not messages). */
const CHAT_CALLS = new Set([
  'sendMessage',
  'sendRichMessage',
  'editMessageText',
  'setMessageReaction',
  'deleteMessage',
]);

/**
 * The scripted model: per conversation at most one turn; `open(route, ids)` starts one, `take(ids)`
 * reads steers, `answer()` ends it. `io` performs these (frames to the gateway, or the floor's sends).
 */
function scriptedModel(io) {
  const lanes = new Map();
  let lastAnswerAt = 0;
  let read = 0;
  const run = async (key, lane) => {
    while (lane.waiting.length > 0) {
      const opening = lane.waiting.splice(0);
      read += opening.length;
      const turn = await io.open(lane.route, opening);
      await sleep(STEP_MS);
      const steers = lane.waiting.splice(0);
      read += steers.length;
      if (steers.length > 0) await io.take(turn, steers);
      await sleep(STEP_MS);
      lastAnswerAt = Date.now();
      await io.answer(turn, lane.route, opening[0]);
    }
    lanes.delete(key);
  };
  return {
    message(route, item) {
      const key = String(route.chatId);
      let lane = lanes.get(key);
      if (lane) {
        lane.waiting.push(item);
        return;
      }
      lane = { route, waiting: [item] };
      lanes.set(key, lane);
      void run(key, lane);
    },
    idle: () => lanes.size === 0,
    lastAnswerAt: () => lastAnswerAt,
    read: () => read,
  };
}

/** The group burst: four messages to the bot, 300 ms apart; resolves with its chat. */
async function groupBurst(tg) {
  const group = tg.createGroup({ title: `team ${Date.now()}`, supergroup: true });
  for (let i = 0; i < 4; i++) {
    tg.sendText(group.id, `${BOT} quick question ${i}`);
    await sleep(300);
  }
  return [group.id];
}

/** The private burst: eight messages in each of the users' private chats within about a second. */
async function privateBurst(tg, users) {
  const chats = users.map((u) => tg.privateChat(u).id);
  for (let i = 0; i < 8; i++) {
    for (const chat of chats) tg.sendText(chat, `burst message ${i}`);
    await sleep(125);
  }
  return chats;
}

/** Waits until the model is idle and no chat-changing call happened for `quietMs`. */
async function settle(tg, model, chats, quietMs = 3000) {
  const lastCall = () =>
    Math.max(
      0,
      ...tg
        .calls()
        .filter((c) => chats.includes(c.chatId) && c.ok && CHAT_CALLS.has(c.method))
        .map((c) => c.at + c.durationMs),
    );
  const until = Date.now() + 120_000;
  while (Date.now() < until) {
    await sleep(200);
    if (model.idle() && Date.now() - Math.max(lastCall(), model.lastAnswerAt()) >= quietMs) break;
  }
  return lastCall();
}

/** Measures one bot over both bursts, one after the other: calls per message read, settle time, 429s. */
async function measure(tg, users, model, label) {
  tg.resetStats();
  const result = {};
  for (const [name, burst] of [
    ['group', () => groupBurst(tg)],
    ['private', () => privateBurst(tg, users)],
  ]) {
    const chats = await burst();
    const last = await settle(tg, model, chats);
    const calls = tg.calls().filter((c) => chats.includes(c.chatId) && c.ok && CHAT_CALLS.has(c.method));
    const messages = chats.reduce((n, c) => n + tg.messages(c).filter((m) => m.from === 'user').length, 0);
    const reactions = calls.filter((c) => c.method === 'setMessageReaction').length;
    result[name] = {
      callsPerMessage: +(calls.length / messages).toFixed(2),
      // What spends the chat's message slots (sends, edits, deletes), and what has a window of its own.
      messageCallsPerMessage: +((calls.length - reactions) / messages).toFixed(2),
      reactionsPerMessage: +(reactions / messages).toFixed(2),
      settledAfterLastAnswerS: +((last - model.lastAnswerAt()) / 1000).toFixed(2),
    };
  }
  result.tooManyRequests = tg.stats().tooManyRequests;
  console.error(`${label}: ${JSON.stringify(result)}`);
  return result;
}

const tg = createTelegramServer();
await tg.start();
const dir = mkdtempSync(join(tmpdir(), 'gwq-'));
const users = [
  tg.defaultUser,
  tg.addUser({ id: 8101, firstName: 'Bob' }),
  tg.addUser({ id: 8102, firstName: 'Cy' }),
];

// The gateway, with the scripted model as its bridge.
const gw = await startBot(
  'gateway',
  benchGatewayOptions(
    tg,
    dir,
    users.map((u) => u.id),
    { card: { showDelayMs: 60_000 } },
  ),
);
let turnCount = 0;
const bridge = createProtocolClient({
  socketPath: join(dir, 'b.sock'),
  agent: 'bench',
  store: createMemoryChannelStore(),
  onFrame(frame) {
    if (frame.type === 'user_message') gatewayModel.message(frame.route, frame.inboundId);
  },
});
const gatewayModel = scriptedModel({
  async open(route, ids) {
    const turnId = `t${++turnCount}`;
    await bridge.send({
      type: 'turn_started',
      turnId,
      route,
      inboundIds: ids,
      request: 'x',
      startedAt: Date.now(),
    });
    return turnId;
  },
  take: (turnId, ids) => bridge.send({ type: 'message_taken', turnId, inboundIds: ids }),
  async answer(turnId) {
    await bridge.send({ type: 'text', turnId, blockId: 'b', text: `Answer of ${turnId}.` });
    await bridge.send({ type: 'turn_ended', turnId, outcome: 'success' });
  },
});
await bridge.start();
await sleep(500);
const gateway = await measure(tg, users, gatewayModel, 'gateway');
await bridge.stop();
await gw.stop();

// The floor: the same turns, only the answers sent.
const floor = await startBot('floor', { token: tg.token, apiRoot: tg.apiRoot, stepMs: STEP_MS });
const floorModel = {
  idle: () => true,
  lastAnswerAt: () => 0,
};
floor.child.on('message', (m) => {
  if (m.answeredAt) floorModel.lastAnswerAt = () => m.answeredAt;
  if (m.idle !== undefined) floorModel.idle = () => m.idle;
});
await sleep(500);
// Chats of their own, so the gateway's calls just before do not count against the floor's limits.
const floorUsers = [8201, 8202, 8203].map((id) => tg.addUser({ id, firstName: `floor${id}` }));
const floorResult = await measure(tg, floorUsers, floorModel, 'floor');
await floor.stop();
await tg.stop();

const ratio = (a, b) => (b > 0 ? +(a / b).toFixed(2) : null);
const compare = (name) => ({
  callsPerMessage: { gateway: gateway[name].callsPerMessage, floor: floorResult[name].callsPerMessage },
  callsRatio: ratio(gateway[name].callsPerMessage, floorResult[name].callsPerMessage),
  messageCallsPerMessage: {
    gateway: gateway[name].messageCallsPerMessage,
    floor: floorResult[name].messageCallsPerMessage,
  },
  messageCallsRatio: ratio(gateway[name].messageCallsPerMessage, floorResult[name].messageCallsPerMessage),
  reactionsPerMessage: gateway[name].reactionsPerMessage,
  settledAfterLastAnswerS: {
    gateway: gateway[name].settledAfterLastAnswerS,
    floor: floorResult[name].settledAfterLastAnswerS,
  },
  settledBehindFloorS: +(
    gateway[name].settledAfterLastAnswerS - floorResult[name].settledAfterLastAnswerS
  ).toFixed(2),
});
console.log(
  JSON.stringify(
    {
      group: compare('group'),
      private: compare('private'),
      tooManyRequests: { gateway: gateway.tooManyRequests, floor: floorResult.tooManyRequests },
      note:
        'calls that change a chat per message the model read (message calls spend its message slots; reactions a ' +
        'window of their own); seconds from the model’s last answer to the chat’s last such call',
    },
    null,
    2,
  ),
);
process.exit(0);
