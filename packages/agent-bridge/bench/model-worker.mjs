// The scripted Messages API of the ingress bench, in a worker thread: the stand-in Telegram shares the
// bench's event loop, and the gateway's Telegram calls of a turn (its placeholder, its typing) would
// otherwise delay the moment a model request is seen — a cost real Telegram, far away, never adds.
import { parentPort } from 'node:worker_threads';
import { createScriptedModel, rule, say, sendFile } from '../../sandbox/dist/index.js';

const arrivedAt = [];
const model = createScriptedModel({
  // `ship`: the remote bench's file out, `big.bin` of the agent's working directory (bench/remote.bench.mjs).
  script: [rule('ingress', say('ok')), rule('ship', sendFile('big.bin', 'Shipped'), say('Sent.'))],
  chunkSize: 64,
  onRequest: (request) => {
    arrivedAt[request.index] = performance.timeOrigin + performance.now();
  },
});
const { baseUrl } = await model.start();
parentPort.postMessage({ type: 'started', baseUrl });
parentPort.on('message', async (message) => {
  if (message.type === 'stop') {
    await model.stop();
    parentPort.close();
    return;
  }
  const request = await model.waitForRequest(
    (r) => r.view?.kind === 'main' && r.view.userText.trim().endsWith(message.token),
    { timeoutMs: 60_000 },
  );
  parentPort.postMessage({ type: 'arrived', token: message.token, at: arrivedAt[request.index] });
});
