// The benches' handle on the scripted Messages API in its worker thread (`model-worker.mjs`): its URL,
// when the main-loop request for a message arrived (this thread's clock), and its stop.
import { Worker } from 'node:worker_threads';

/** Starts the model's thread; resolves once it serves. */
export async function startModelThread() {
  const thread = new Worker(new URL('./model-worker.mjs', import.meta.url));
  const { baseUrl } = await new Promise((resolve) => thread.once('message', resolve));
  /** Asked for, by token: resolves with the moment its main-loop request reached the model. */
  const asked = new Map();
  thread.on('message', (message) => {
    if (message.type === 'arrived') asked.get(message.token)?.(message.at - performance.timeOrigin);
  });
  return {
    baseUrl,
    /** When the main loop's request for the message ending in `token` arrived (`performance.now()` time). */
    requestFor: (token) =>
      new Promise((resolve) => {
        asked.set(token, resolve);
        thread.postMessage({ type: 'ask', token });
      }),
    async stop() {
      thread.postMessage({ type: 'stop' });
      await new Promise((resolve) => thread.once('exit', resolve));
    },
  };
}
