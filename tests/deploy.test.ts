/**
 * What `deploy/` ships must be usable as shipped: the example config validates, the units parse and are
 * hardened to their target exposure, the install script is valid shell, the token never reaches the
 * agent unit, and the agent unit's own lines keep claude across a restart and end it on a stop.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CONVERSATIONS_DIR,
  conversationDir,
  initialSessionState,
  readStartTime,
} from '@switchyard/agent-bridge';
import { describe, expect, it } from 'vitest';
import { killAll, processesOf } from './processes.js';
import { MAIN } from './system.js';

const deploy = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../deploy');
const unitText = (name: 'agent' | 'gateway') =>
  readFileSync(path.join(deploy, `switchyard-${name}@.service`), 'utf8');
const hasAnalyze = existsSync('/usr/bin/systemd-analyze');

/** The values of `Key=` lines in a unit, in order. */
function directives(text: string, key: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${key}=`))
    .map((line) => line.slice(key.length + 1));
}

/** Both units instantiated for agent `demo` in a temporary directory, as systemd would load them. */
function withUnits<T>(run: (units: { gateway: string; agent: string }) => T): T {
  const dir = mkdtempSync(path.join(tmpdir(), 'sy-units-'));
  try {
    const copy = (name: 'agent' | 'gateway') => {
      const target = path.join(dir, `switchyard-${name}@demo.service`);
      copyFileSync(path.join(deploy, `switchyard-${name}@.service`), target);
      return target;
    };
    return run({ gateway: copy('gateway'), agent: copy('agent') });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('deploy/', () => {
  it('the example config is valid, and `config check` names what it points at that this host lacks', () => {
    const result = spawnSync(
      process.execPath,
      [MAIN, '--config', path.join(deploy, 'switchyard.example.yaml'), 'config', 'check'],
      {
        encoding: 'utf8',
        env: { ...process.env, SWITCHYARD_CONFIG: '' },
      },
    );
    expect(result.stderr).not.toContain('is not a valid Switchyard config');
    // The shape is right; the token credential and working directory are the operator's to create.
    expect(result.stderr).toContain('agents[0].token: systemd credential telegram-token');
    expect(result.stderr).toContain('/etc/switchyard/credentials/demo.token');
    expect(result.stderr).toContain(
      'agents[0].workDir: the working directory /srv/agents/demo does not exist',
    );
    expect(result.status).toBe(1);
  });

  it('the pack, install and uninstall scripts are valid shell', () => {
    for (const script of ['pack.sh', 'install.sh', 'uninstall.sh']) {
      expect(spawnSync('bash', ['-n', path.join(deploy, script)]).status, script).toBe(0);
    }
  });

  it('the agent unit signals only the bridge, so claude outlives a restart', () => {
    const unit = unitText('agent');
    expect(unit).toMatch(/^KillMode=process$/m);
    expect(unit).toMatch(/^ExecStart=.* bridge %i$/m);
    expect(unit).toMatch(/^ExecStopPost=.* unit-stopped %i$/m);
    expect(unit).toMatch(/^OOMPolicy=continue$/m);
    expect(unit).toMatch(/^MemoryHigh=\S+$/m);
    expect(unit).toMatch(/^TasksMax=\d+$/m);
    // The gateway alone declares the runtime directory (systemd chowns a declared directory to the
    // unit's user) and keeps it across restarts; its group is the agent's, so the bridge reaches it.
    const gateway = unitText('gateway');
    expect(gateway).toMatch(/^RuntimeDirectory=switchyard\/%i$/m);
    expect(gateway).toMatch(/^RuntimeDirectoryPreserve=yes$/m);
    expect(gateway).toMatch(/^Group=sy-%i$/m);
    expect(unit).not.toMatch(/^RuntimeDirectory=/m);
  });

  it('runs each side as its own user, and gives the bot token to the gateway alone', () => {
    const agent = unitText('agent');
    const gateway = unitText('gateway');
    expect(directives(agent, 'User')).toEqual(['sy-%i']);
    expect(directives(gateway, 'User')).toEqual(['switchyard']);
    // The state directories do not nest into each other: neither unit's chown reaches the other's.
    expect(directives(gateway, 'StateDirectory')).toEqual(['switchyard/%i/gateway']);
    expect(directives(agent, 'StateDirectory')).toEqual(['switchyard/%i/bridge']);
    expect(directives(gateway, 'LoadCredential')).toEqual([
      'telegram-token:/etc/switchyard/credentials/%i.token',
    ]);
    // Nothing of the token in the agent unit: no credential, no token file, no variable naming it.
    for (const key of ['LoadCredential', 'LoadCredentialEncrypted', 'SetCredential', 'EnvironmentFile']) {
      expect(directives(agent, key), key).toEqual([]);
    }
    expect(directives(agent, 'Environment').join(' ')).not.toMatch(/token|credential/i);
    // And the example config reads it from the credential, not from a file the agent user could open.
    expect(readFileSync(path.join(deploy, 'switchyard.example.yaml'), 'utf8')).toMatch(
      /^\s+token: \{ credential: telegram-token \}/m,
    );
  });

  it('both units make the exchange directory, shared with the agent group, and may write it', () => {
    // Made as root before each start of either unit (neither service may set a setgid bit), with the
    // owner and mode the gateway and the bridge check (`prepareExchange`); not a StateDirectory=, which
    // systemd would chown to one unit's user.
    const dir = '/var/lib/switchyard/%i/files';
    for (const name of ['gateway', 'agent'] as const) {
      const unit = unitText(name);
      expect(directives(unit, 'ExecStartPre'), name).toEqual([
        `+/usr/bin/install -d -o switchyard -g sy-%i -m 2770 ${dir}`,
      ]);
      expect(directives(unit, 'ReadWritePaths'), name).toContain(dir);
      expect(directives(unit, 'StateDirectory').join(' '), name).not.toContain('files');
    }
    // The example config's stateDir is the one the units name.
    expect(readFileSync(path.join(deploy, 'switchyard.example.yaml'), 'utf8')).toMatch(
      /^\s+stateDir: \/var\/lib\/switchyard\/demo$/m,
    );
  });

  it.skipIf(!hasAnalyze)('systemd accepts both units', () => {
    withUnits(({ gateway, agent }) => {
      const result = spawnSync('systemd-analyze', ['verify', gateway, agent], { encoding: 'utf8' });
      expect(
        result.stderr
          .split('\n')
          .filter((line) => line.includes(path.dirname(gateway)) && !/Cannot add dependency/.test(line)),
      ).toEqual([]);
      expect(result.status).toBe(0);
    });
  });

  it.skipIf(!hasAnalyze)(
    'rates the gateway at most 2.0 and the agent at most 5.0 (systemd-analyze security)',
    () => {
      withUnits((units) => {
        const score = (file: string): number => {
          const result = spawnSync('systemd-analyze', ['security', '--offline=true', '--no-pager', file], {
            encoding: 'utf8',
          });
          const found = /Overall exposure level for \S+: (\d+\.\d+)/.exec(result.stdout);
          if (!found?.[1]) throw new Error(`no score in:\n${result.stdout}\n${result.stderr}`);
          return Number(found[1]);
        };
        const gateway = score(units.gateway);
        const agent = score(units.agent);
        console.log(`systemd-analyze security: gateway ${gateway.toFixed(1)}, agent ${agent.toFixed(1)}`);
        expect(gateway).toBeLessThanOrEqual(2.0);
        expect(agent).toBeLessThanOrEqual(5.0);
      });
    },
  );
});

/**
 * The agent unit's `ExecStart=` and `ExecStopPost=` run as systemd runs them: `KillMode=process` (only
 * the bridge is signalled), then the stop hook, with a stand-in `systemctl` reporting the job systemd
 * would be running. The claude process is a stand-in too (`sleep`), recorded as the bridge records one.
 */
describe('agent unit: stop means stop, restart keeps Claude', () => {
  it('keeps claude across a restart, a crash and an unanswerable systemctl, and ends it on a stop', async () => {
    const unit = unitText('agent');
    const command = (key: string): string[] => {
      const [line] = directives(unit, key);
      const prefix = '/usr/bin/env node /opt/switchyard/packages/cli/dist/main.js ';
      if (!line?.startsWith(prefix))
        throw new Error(`${key}= does not run the installed switchyard: ${line}`);
      return [MAIN, ...line.slice(prefix.length).replaceAll('%i', 'demo').split(' ')];
    };
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-unit-'));
    const stateDir = path.join(dir, 'state');
    const bridgeDir = path.join(stateDir, 'bridge');
    const bin = path.join(dir, 'bin');
    const jobs = path.join(dir, 'jobs');
    mkdirSync(bridgeDir, { recursive: true, mode: 0o700 });
    mkdirSync(bin);
    mkdirSync(path.join(dir, 'work'));
    const config = path.join(dir, 'switchyard.yaml');
    writeFileSync(
      config,
      JSON.stringify({
        agents: [
          {
            name: 'demo',
            allow: [1],
            workDir: path.join(dir, 'work'),
            stateDir,
            runtimeDir: path.join(dir, 'run'),
            claude: { bin: '/bin/false', restartOnExit: false },
          },
        ],
      }),
    );
    // systemctl as the hook calls it: `list-jobs --no-legend --no-pager UNIT`, answered from `jobs`.
    const systemctl = path.join(bin, 'systemctl');
    writeFileSync(
      systemctl,
      `#!/bin/sh\n[ "$1" = list-jobs ] || exit 2\n[ -f "${jobs}" ] || { echo "Failed to connect to bus" >&2; exit 1; }\ncat "${jobs}"\n`,
    );
    chmodSync(systemctl, 0o755);
    // The environment systemd gives the unit's commands (Environment= lines, with our config).
    const env = {
      PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: bridgeDir,
      SWITCHYARD_CONFIG: config,
      INVOCATION_ID: 'test',
      SWITCHYARD_LOG_LEVEL: 'info',
    };

    // The stand-in claude: holds its stdin fifo read-write, as the bridge starts the real one, and is
    // recorded as the process of one conversation (chat 42).
    const sessionDir = path.join(bridgeDir, CONVERSATIONS_DIR, conversationDir('42'));
    mkdirSync(sessionDir, { recursive: true, mode: 0o700 });
    const fifo = path.join(sessionDir, 'stdin.fifo');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    writeFileSync(path.join(sessionDir, 'stdout.log'), '');
    const stdin = openSync(fifo, constants.O_RDWR);
    const claude = spawn('sleep', ['600'], { detached: true, stdio: [stdin, 'ignore', 'ignore'] });
    closeSync(stdin);
    claude.unref();
    const pid = claude.pid ?? -1;
    const started = readStartTime(pid);
    if (!started.ok) throw new Error('the stand-in claude did not start');
    const record = path.join(sessionDir, 'bridge.json');
    writeFileSync(
      record,
      JSON.stringify({
        version: 1,
        route: { chatId: 42 },
        child: { pid, startTime: started.startTime, startedAt: Date.now() },
        stdoutOffset: 0,
        session: initialSessionState(),
        delivered: [],
        exits: [],
      }),
    );
    const alive = () => {
      const found = readStartTime(pid);
      return found.ok && !found.zombie;
    };

    let bridge: ChildProcess | undefined;
    let output = '';
    const startBridge = async () => {
      const [main, ...args] = command('ExecStart');
      bridge = spawn(process.execPath, [main ?? '', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      bridge.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      bridge.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const seen = output.split('adopted the Claude process').length;
      const deadline = Date.now() + 20_000;
      while (output.split('adopted the Claude process').length === seen) {
        if (Date.now() > deadline)
          throw new Error(`the bridge did not adopt claude:\n${output.slice(-3000)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    /** systemd's stop of the unit: the job it runs, the signal for the bridge (KillMode=process), then ExecStopPost=. */
    const stopUnit = async (job: 'stop' | 'restart' | undefined | 'no-systemd', signal: NodeJS.Signals) => {
      if (job === 'no-systemd') rmSync(jobs, { force: true });
      else writeFileSync(jobs, job ? `77 switchyard-agent@demo.service ${job} running\n` : '');
      const running = bridge;
      if (running && running.exitCode === null && running.signalCode === null) {
        const gone = new Promise((resolve) => running.once('exit', resolve));
        running.kill(signal);
        await gone;
      }
      const [main, ...args] = command('ExecStopPost');
      const hook = spawnSync(process.execPath, [main ?? '', ...args], {
        env,
        encoding: 'utf8',
        timeout: 30_000,
      });
      output += hook.stdout + hook.stderr;
      expect(hook.status, output.slice(-3000)).toBe(0);
    };
    const recorded = () => JSON.parse(readFileSync(record, 'utf8')).child?.pid as number | undefined;

    try {
      await startBridge();
      await stopUnit('restart', 'SIGTERM'); // systemctl restart, /restart
      expect(alive()).toBe(true);
      expect(recorded()).toBe(pid);

      await startBridge();
      await stopUnit(undefined, 'SIGKILL'); // the bridge crashed; Restart=always brings it back
      expect(alive()).toBe(true);

      await startBridge();
      await stopUnit('no-systemd', 'SIGTERM'); // systemd cannot be asked: keep, and say so
      expect(alive()).toBe(true);
      expect(output).toContain('cannot ask systemd why switchyard-agent@demo.service stopped');

      await startBridge();
      await stopUnit('stop', 'SIGTERM'); // systemctl stop
      for (let i = 0; i < 50 && alive(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(alive(), output.slice(-3000)).toBe(false);
      expect(recorded()).toBeUndefined();
    } finally {
      if (bridge && bridge.exitCode === null) bridge.kill('SIGKILL');
      if (alive()) process.kill(pid, 'SIGKILL');
      killAll(processesOf(dir));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
