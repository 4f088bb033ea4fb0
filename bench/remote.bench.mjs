// A bridge on another host (issue 29): what the ssh link costs, as ratios measured in one run.
//   npx -y pnpm@12.4.2 build && node bench/remote.bench.mjs
// 1. Ingress and first words, through the ssh link against the local socket. Two agents on this machine,
//    each a built gateway and bridge as processes (`switchyard gateway|bridge`, as the units run them) with
//    the real CLI against the scripted Messages API: one joined by the gateway's socket as usual, the other
//    by `switchyard link` (an `ssh -N -R` client) through a real sshd on 127.0.0.1, so the protocol crosses
//    ssh's encryption and two more process hops. Ingress is timed from the stand-in Telegram answering the
//    `getUpdates` that hands the message out to the scripted API receiving its request (as
//    packages/agent-bridge/bench/ingress.bench.mjs does); first words from the user's message to the first
//    answer text the chat shows (a draft or a message). The two are measured alternately, after the same
//    pause, so that a shared machine's drift falls on both.
// 2. A 20 MB file through the protocol against `scp` of the same file to the same sshd: the linked agent
//    sends it (`send_file` of a file in its working directory), and the protocol's transfer carries it to
//    the gateway's exchange over the link, timed from the transfer's first bytes there (its `.part`) to
//    the whole file renamed into place. Beside it, the link's ceiling: 20 MB written raw into the worker's
//    end of the forwarded socket and read whole at the gateway's (and a local socket's time, the floor).
//    scp logs in for each copy, the link once: ssh's login alone is measured too, and the ratios are
//    given both ways.
// No sshd (Debian's openssh-server) or ssh/scp: the bench says so and skips, exit 0.
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SSHD = '/usr/sbin/sshd';
const missing = [SSHD, '/usr/bin/ssh', '/usr/bin/scp', '/usr/bin/ssh-keygen'].filter((f) => !existsSync(f));
if (missing.length > 0) {
  console.log(
    `remote: skipped — ${missing.join(', ')} not installed (apt-get install openssh-server openssh-client)`,
  );
  process.exit(0);
}

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 200);
const FILE_BYTES = 20 * 1024 * 1024;
const root = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(root, 'packages/cli/dist/main.js');
const CLAUDE = join(root, 'node_modules/.bin/claude');
const { createTelegramServer, scriptedClaudeEnv } = await import(
  join(root, 'packages/sandbox/dist/index.js')
);
const { sshLinkArgs } = await import(join(root, 'packages/cli/dist/link.js'));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const children = [];

const dir = mkdtempSync(join(tmpdir(), 'sy-remote-bench-'));
try {
  // --- an sshd of the bench's own, on 127.0.0.1 -------------------------------------------------------
  const keygen = (file) =>
    execFileSync('/usr/bin/ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'bench', '-f', file]);
  for (const key of ['host', 'link', 'scp']) keygen(join(dir, key));
  const user = userInfo().username;
  const port = await new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address();
      probe.close(() => resolve(free));
    });
  });
  // The link's key as deploy/README.md writes it; scp's key may run scp's command on the "worker".
  writeFileSync(
    join(dir, 'authorized_keys'),
    `restrict,port-forwarding ${readFileSync(join(dir, 'link.pub'), 'utf8')}${readFileSync(join(dir, 'scp.pub'), 'utf8')}`,
    { mode: 0o600 },
  );
  writeFileSync(
    join(dir, 'known_hosts'),
    `[127.0.0.1]:${port} ${readFileSync(join(dir, 'host.pub'), 'utf8')}`,
  );
  writeFileSync(
    join(dir, 'sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${join(dir, 'host')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      `AllowUsers ${user}`,
      'UsePAM no',
      'StrictModes no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'AllowStreamLocalForwarding yes',
      'AllowTcpForwarding remote',
      'StreamLocalBindUnlink yes',
      `Subsystem sftp internal-sftp`,
      '',
    ].join('\n'),
  );
  if (process.getuid?.() === 0 && !existsSync('/run/sshd')) mkdirSync('/run/sshd', { mode: 0o755 });
  const sshd = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config')], { stdio: 'ignore' });
  children.push(sshd);
  for (let up = false; !up; await sleep(50)) {
    up = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  }
  const remote = (socketPath) => ({
    host: '127.0.0.1',
    socketPath,
    ssh: {
      user,
      port,
      identityFile: join(dir, 'link'),
      knownHosts: join(dir, 'known_hosts'),
      aliveIntervalSeconds: 5,
    },
  });

  // --- first, with no Claude running: 20 MB raw through the forwarded socket, through a local one, by scp --
  const payload = randomBytes(FILE_BYTES);
  const digest = createHash('sha256').update(payload).digest('hex');
  writeFileSync(join(dir, 'payload'), payload);
  /** Listens at `at`, reads a whole stream, answers its SHA-256; resolves with a close function. */
  const sink = async (at) => {
    const server = net.createServer((socket) => {
      const hash = createHash('sha256');
      let bytes = 0;
      socket.on('data', (chunk) => {
        hash.update(chunk);
        bytes += chunk.length;
        if (bytes === FILE_BYTES) socket.end(hash.digest('hex'));
      });
    });
    await new Promise((resolve) => server.listen(at, resolve));
    return () => new Promise((resolve) => server.close(resolve));
  };
  /** Writes the payload into `at` and waits for its checksum back; resolves with the ms it took. */
  const stream = (at) =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const socket = net.connect(at, () => socket.write(payload));
      let answer = '';
      socket.on('data', (chunk) => {
        answer += chunk;
      });
      socket.on('end', () => {
        socket.destroy();
        if (answer === digest) resolve(performance.now() - started);
        else reject(new Error(`the stream arrived as ${answer || 'nothing'}, not ${digest}`));
      });
      socket.on('error', reject);
    });
  const gatewaySocket = join(dir, 'gw.sock');
  const workerSocket = join(dir, 'worker.sock');
  const closeSink = await sink(gatewaySocket);
  const link = spawn('ssh', sshLinkArgs(remote(workerSocket), gatewaySocket), { stdio: 'ignore' });
  children.push(link);
  for (let i = 0; !existsSync(workerSocket); i++) {
    if (i > 200) throw new Error('the ssh link did not set up its forward in 10 s');
    await sleep(50);
  }
  await stream(workerSocket); // warm: the channel's window grows on first use
  const scp = () => {
    const started = performance.now();
    execFileSync('/usr/bin/scp', [
      '-q',
      '-F',
      'none',
      '-o',
      'BatchMode=yes',
      '-o',
      `UserKnownHostsFile=${join(dir, 'known_hosts')}`,
      '-o',
      'IdentitiesOnly=yes',
      '-i',
      join(dir, 'scp'),
      '-P',
      String(port),
      join(dir, 'payload'),
      `${user}@127.0.0.1:${join(dir, 'copied')}`,
    ]);
    return performance.now() - started;
  };
  // scp logs in for each copy; the link is logged in already. Its login alone, measured the same way:
  const login = () => {
    const started = performance.now();
    execFileSync('/usr/bin/ssh', [
      ...['-F', 'none', '-o', 'BatchMode=yes', '-o', `UserKnownHostsFile=${join(dir, 'known_hosts')}`],
      ...[
        '-o',
        'IdentitiesOnly=yes',
        '-i',
        join(dir, 'scp'),
        '-p',
        String(port),
        `${user}@127.0.0.1`,
        'true',
      ],
    ]);
    return performance.now() - started;
  };
  const viaLink = [];
  const viaLocal = [];
  const viaScp = [];
  const logins = [];
  for (let i = 0; i < 5; i++) {
    viaLink.push(await stream(workerSocket));
    viaLocal.push(await stream(gatewaySocket));
    viaScp.push(scp());
    logins.push(login());
  }
  const copied = createHash('sha256')
    .update(readFileSync(join(dir, 'copied')))
    .digest('hex');
  if (copied !== digest) throw new Error('scp copied other bytes');
  link.kill('SIGTERM');
  await closeSink();
  const mb = FILE_BYTES / 1024 / 1024;
  const rate = (ms) => `${(mb / (ms / 1000)).toFixed(0)} MB/s`;
  console.log(
    "remote: 20 MB raw through the forwarded socket (the link's ceiling), checksummed, medians of 5",
  );
  console.log(`  through the ssh link  ${median(viaLink).toFixed(0)} ms (${rate(median(viaLink))})`);
  console.log(`  scp of the same file  ${median(viaScp).toFixed(0)} ms (${rate(median(viaScp))})`);
  console.log(
    `  a local socket        ${median(viaLocal).toFixed(0)} ms (${rate(median(viaLocal))}), the floor`,
  );
  console.log(
    `  ssh's login alone     ${median(logins).toFixed(0)} ms (scp pays it per copy; the link once)`,
  );
  // scp less its login, per copy (logins and copies alternate); under a loaded machine a login can take as
  // long as a copy, and then the difference says nothing.
  const copyOnly = median(viaScp.map((ms, i) => ms - (logins[i] ?? 0)));
  const withoutLogin = (ms) =>
    copyOnly > median(viaScp) / 10
      ? (ms / copyOnly).toFixed(2)
      : 'not measurable (a login took as long as a copy)';
  console.log(
    `  ratio link / scp      ${(median(viaLink) / median(viaScp)).toFixed(2)}; ` +
      `against scp without its login ${withoutLogin(median(viaLink))}`,
  );

  // --- ingress and first words, through the link against the local socket -------------------------------
  const { startModelThread } = await import(join(root, 'packages/agent-bridge/bench/model-thread.mjs'));
  const model = await startModelThread();
  const { baseUrl, requestFor } = model;
  /** One agent: its stand-in Telegram, its config(s), its services as processes. */
  const agent = async (name, viaSsh) => {
    const telegram = createTelegramServer({
      token: `4250:remote-bench-${name}-token-0000000000`,
      rateLimits: false,
    });
    const { apiRoot } = await telegram.start();
    const base = join(dir, name);
    const work = join(base, 'work');
    mkdirSync(work, { recursive: true });
    const entry = (side) => ({
      name,
      apiRoot,
      allow: [telegram.defaultUser.id],
      workDir: work,
      stateDir: join(base, side, 'state'),
      runtimeDir: join(base, side, 'run'),
      card: { showDelayMs: 600_000 },
      claude: { bin: CLAUDE, env: scriptedClaudeEnv({ baseUrl, configDir: join(base, 'claude-config') }) },
      ...(viaSsh
        ? {
            bridge: {
              host: '127.0.0.1',
              socket: join(base, 'w.sock'),
              ssh: { user, port, identityFile: join(dir, 'link'), knownHosts: join(dir, 'known_hosts') },
            },
          }
        : {}),
    });
    const tokenFile = join(base, 'token');
    writeFileSync(tokenFile, `${telegram.token}\n`, { mode: 0o600 });
    const gatewayConfig = join(base, 'gateway.json');
    writeFileSync(
      gatewayConfig,
      JSON.stringify({ agents: [{ ...entry('gateway'), token: { file: tokenFile } }] }),
    );
    // The worker's config: its own state (and, through ssh, no token).
    const workerConfig = viaSsh ? join(base, 'worker.json') : gatewayConfig;
    if (viaSsh) writeFileSync(workerConfig, JSON.stringify({ agents: [entry('worker')] }));
    const services = viaSsh
      ? [
          ['gateway', gatewayConfig],
          ['link', gatewayConfig],
          ['bridge', workerConfig],
        ]
      : [
          ['gateway', gatewayConfig],
          ['bridge', gatewayConfig],
        ];
    for (const [service, config] of services) {
      children.push(
        spawn(process.execPath, [MAIN, '--config', config, service, name], {
          env: { ...process.env, SWITCHYARD_LOG_LEVEL: 'warn' },
          stdio: 'ignore',
        }),
      );
    }
    let deliveredAt = 0;
    let handedOut = false;
    let firstWordsAt;
    const chatId = telegram.privateChat().id;
    telegram.subscribe((event) => {
      if (event.type === 'updates_delivered') handedOut = true;
      else if (handedOut && event.type === 'api_call' && event.call.method === 'getUpdates') {
        handedOut = false;
        deliveredAt = performance.now();
      } else if (firstWordsAt === undefined) {
        const text =
          event.type === 'draft'
            ? event.draft.text
            : event.type === 'message' && event.message.from === 'bot'
              ? event.message.text
              : '';
        if (text.includes('ok')) firstWordsAt = performance.now();
      }
    });
    const answers = () => telegram.messages(chatId).filter((m) => m.from === 'bot' && m.text === 'ok').length;
    return {
      telegram,
      work,
      /** The gateway's exchange directory, where a file the agent sends lands. */
      gatewayFiles: join(base, 'gateway', 'state', 'files'),
      /** Asks for `big.bin`; resolves once the chat shows the answer after it. */
      async ship(i) {
        const before = telegram.messages(chatId).filter((m) => m.from === 'bot' && m.text === 'Sent.').length;
        telegram.sendText(chatId, `ship ${i}`);
        await telegram.waitFor(
          () =>
            telegram.messages(chatId).filter((m) => m.from === 'bot' && m.text === 'Sent.').length > before ||
            undefined,
          { timeoutMs: 120_000 },
        );
      },
      /** One message; resolves with its ingress and first-words latency once its answer is in the chat. */
      async turn(i) {
        const token = `ingress ${name} ${i}`;
        const before = answers();
        firstWordsAt = undefined;
        const sentAt = performance.now();
        telegram.sendText(chatId, token);
        const at = await requestFor(token);
        await telegram.waitFor(() => answers() > before || undefined, { timeoutMs: 60_000 });
        return { ingress: at - deliveredAt, firstWords: (firstWordsAt ?? performance.now()) - sentAt };
      },
    };
  };
  const local = await agent('local', false);
  const linked = await agent('linked', true);
  await local.turn('warm');
  await linked.turn('warm');
  const samples = { local: [], linked: [] };
  for (let i = 0; i < RUNS; i++) {
    await sleep(GAP_MS);
    samples.local.push(await local.turn(i));
    await sleep(GAP_MS);
    samples.linked.push(await linked.turn(i));
  }
  const of = (side, key) => median(samples[side].map((s) => s[key]));
  console.log(`remote: ingress and first words, medians of ${RUNS}, alternating, ${GAP_MS} ms apart`);
  for (const key of ['ingress', 'firstWords']) {
    const [l, r] = [of('local', key), of('linked', key)];
    console.log(
      `  ${key === 'ingress' ? 'ingress    ' : 'first words'}  local socket ${l.toFixed(1)} ms, through ssh ${r.toFixed(1)} ms: ` +
        `${r >= l ? '+' : ''}${(r - l).toFixed(1)} ms, ratio ${(r / l).toFixed(2)}`,
    );
  }
  // --- the 20 MB file out through the protocol's transfer over the link, against scp ----------------------
  // Timed from the first bytes of the transfer in the gateway's exchange (its `.part`) to the whole file
  // renamed into place there: the transfer alone, not Claude's tool call before it or the upload after.
  writeFileSync(join(linked.work, 'big.bin'), payload);
  const transfers = [];
  for (let i = 0; i < 3; i++) {
    const seen = new Set(existsSync(linked.gatewayFiles) ? readdirSync(linked.gatewayFiles) : []);
    let startedAt;
    let doneAt;
    const watch = setInterval(() => {
      const names = existsSync(linked.gatewayFiles) ? readdirSync(linked.gatewayFiles) : [];
      for (const name of names) {
        if (seen.has(name) || !name.startsWith('out-')) continue;
        if (name.endsWith('.part')) startedAt ??= performance.now();
        else {
          doneAt ??= performance.now();
          seen.add(name);
        }
      }
    }, 2);
    await linked.ship(i);
    clearInterval(watch);
    if (startedAt === undefined || doneAt === undefined)
      throw new Error('the transfer was not seen in the exchange');
    transfers.push(doneAt - startedAt);
  }
  console.log('remote: the 20 MB file out through the protocol (a transfer over the ssh link), medians of 3');
  console.log(`  transfer over the link ${median(transfers).toFixed(0)} ms (${rate(median(transfers))})`);
  console.log(
    `  ratio transfer / scp   ${(median(transfers) / median(viaScp)).toFixed(2)}; against scp without its login ` +
      `${withoutLogin(median(transfers))}`,
  );
  await model.stop();
  await local.telegram.stop();
  await linked.telegram.stop();
} finally {
  for (const child of children.reverse()) if (child.exitCode === null) child.kill('SIGTERM');
  await sleep(500);
  // The bridges leave claude running on SIGTERM by design; end them for real.
  for (const [name, config] of [
    ['local', join(dir, 'local', 'gateway.json')],
    ['linked', join(dir, 'linked', 'worker.json')],
  ]) {
    if (existsSync(config))
      execFileSync(process.execPath, [MAIN, '--config', config, 'stop-claude', name], { stdio: 'ignore' });
  }
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
