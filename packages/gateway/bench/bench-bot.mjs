// What the gateway benches share: a bot in a child process of its own (bot-process.mjs) and the
// gateway options every bench starts from. One place, so a change to how a bench bot starts or stops,
// or to what a bench gateway needs, is made once.
import { fork } from 'node:child_process';
import { join } from 'node:path';

/**
 * Starts bot-process.mjs as `kind` ('gateway', 'echo', 'floor'); resolves once the bot is polling.
 * `ask(what)` asks the child for one value (`rss`, `heap`) and resolves with its answer.
 */
export async function startBot(kind, options, { execArgv = [] } = {}) {
  const child = fork(new URL('./bot-process.mjs', import.meta.url), [kind], {
    env: { ...process.env, BENCH_OPTIONS: JSON.stringify(options) },
    execArgv,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`${kind} bot exited with ${code}`)));
  });
  const ask = (what) =>
    new Promise((resolve) => {
      const on = (m) => {
        if (m[what] === undefined) return;
        child.off('message', on);
        resolve(m[what]);
      };
      child.on('message', on);
      child.send({ [what]: true });
    });
  return {
    child,
    ask,
    rss: () => ask('rss'),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.send({ stop: true });
      }),
  };
}

/** A bench gateway's options against the stand-in `tg`, its state in `dir`; `extra` on top. */
export function benchGatewayOptions(tg, dir, allowUsers, extra = {}) {
  return {
    agent: 'bench',
    token: tg.token,
    apiRoot: tg.apiRoot,
    allowUsers,
    stateDir: join(dir, 's'),
    socketPath: join(dir, 'b.sock'),
    polling: { timeoutSec: 1 },
    ...extra,
  };
}
