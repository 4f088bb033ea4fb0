import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { silentLogger } from '@switchyard/protocol';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseConfig } from '../src/config.js';
import { ConfigError } from '../src/config-error.js';
import { createLink, sshLinkArgs } from '../src/link.js';
import { remoteBridgeFindings } from '../src/remote-bridge-config.js';
import { createSupervisor } from '../src/supervisor.js';

const env = { env: {}, cwd: '/srv' };
const FILE = '/etc/switchyard/switchyard.yaml';
const yaml = (bridge: string, extra = '') =>
  `agents:\n  - name: demo\n    token: { credential: telegram-token }\n    allow: [1]\n    workDir: /w\n    stateDir: /var/lib/switchyard/demo\n    runtimeDir: /run/switchyard/demo\n${bridge}${extra}`;
const SSH =
  '    bridge:\n      host: build-box\n      ssh: { identityFile: ssh/demo.key, knownHosts: ssh/known_hosts }\n';

function problems(text: string): string[] {
  try {
    parseConfig(text, FILE, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('config was accepted');
}

describe('a bridge on another host: config', () => {
  it('resolves the bridge: block with its defaults; none means the bridge is beside the gateway', () => {
    const agent = parseConfig(yaml(SSH), FILE, env).agents[0];
    expect(agent?.bridge).toEqual({
      host: 'build-box',
      socketPath: '/var/lib/switchyard/demo/bridge/link.sock',
      ssh: {
        user: 'sy-demo',
        port: 22,
        identityFile: '/etc/switchyard/ssh/demo.key',
        knownHosts: '/etc/switchyard/ssh/known_hosts',
        aliveIntervalSeconds: 5,
      },
    });
    expect(parseConfig(yaml(''), FILE, env).agents[0]?.bridge).toBeUndefined();
  });

  it('explains a bad bridge: block, and refuses a host or user ssh would take for an option', () => {
    expect(problems(yaml('    bridge: { host: build-box }\n'))).toEqual([
      'agents[0].bridge.ssh: expected ssh: { identityFile, knownHosts } (and optionally user, port)',
    ]);
    expect(
      problems(yaml('    bridge: { host: "-oProxyCommand=sh", ssh: { identityFile: k, knownHosts: h } }\n')),
    ).toEqual([
      expect.stringMatching(/^agents\[0\]\.bridge\.host: expected a host name.*not starting with "-"/),
    ]);
    expect(
      problems(
        yaml('    bridge: { host: b, ssh: { user: "-l", port: 70000, identityFile: k, knownHosts: h } }\n'),
      ),
    ).toEqual([
      expect.stringMatching(/^agents\[0\]\.bridge\.ssh\.user: expected the login name/),
      expect.stringMatching(/^agents\[0\]\.bridge\.ssh\.port: /),
    ]);
    expect(
      problems(
        yaml('    bridge: { host: b, socket: relative.sock, ssh: { identityFile: k, knownHosts: h } }\n'),
      ),
    ).toEqual(['agents[0].bridge.socket: expected an absolute path on the worker host, without ":"']);
    expect(
      problems(
        yaml(
          `    bridge: { host: b, socket: /${'x'.repeat(120)}, ssh: { identityFile: k, knownHosts: h } }\n`,
        ),
      ),
    ).toEqual([expect.stringMatching(/bridge\.socket: the worker's socket path .* over the 107-byte limit/)]);
  });

  it('refuses a secret of the gateway written in a config the worker host holds too', () => {
    const inline = `agents:\n  - name: demo\n    token: "123456:AAH-abcdefghijklmnopqrstuvwxyz"\n    allow: [1]\n    workDir: /w\n${SSH}    voice: { url: "http://127.0.0.1:1/v1", model: whisper-1, key: sk-inline }\n`;
    expect(problems(inline)).toEqual([
      expect.stringMatching(
        /^agents\[0\]\.token: the inline bot token is in the config file, which the worker host holds too/,
      ),
      expect.stringMatching(/^agents\[0\]\.voice\.key: the inline key is in the config file/),
    ]);
  });

  it('config check: says where the bridge runs, and that a key others may read is refused by ssh', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-remote-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const key = path.join(dir, 'key');
    writeFileSync(key, 'PRIVATE');
    chmodSync(key, 0o644);
    const remote = {
      host: 'build-box',
      socketPath: '/s.sock',
      ssh: {
        user: 'sy-demo',
        port: 22,
        identityFile: key,
        knownHosts: path.join(dir, 'none'),
        aliveIntervalSeconds: 5,
      },
    };
    const findings = remoteBridgeFindings(remote, 0);
    expect(findings.map((f) => [f.level, f.path])).toEqual([
      ['ok', 'agents[0].bridge'],
      ['ok', 'agents[0].bridge'],
      ['error', 'agents[0].bridge.ssh.identityFile'],
      ['warn', 'agents[0].bridge.ssh.knownHosts'],
    ]);
    expect(findings[0]?.message).toBe(
      'the bridge runs on build-box, reached as sy-demo@build-box:22; its socket there is /s.sock',
    );
    expect(findings[1]?.message).toMatch(/^files cross the link as protocol transfers/);
    expect(findings[2]?.fix).toBe(`chmod 600 ${key}`);
    expect(findings[3]?.fix).toBe(`ssh-keyscan -p 22 build-box >> ${path.join(dir, 'none')}`);
  });
});

describe('a bridge on another host: the link', () => {
  it('asks ssh for the forward of the gateway socket to the worker one, fails on a failed forward, ends options before the host', () => {
    const agent = parseConfig(yaml(SSH), FILE, env).agents[0];
    if (!agent?.bridge) throw new Error('no bridge');
    const args = sshLinkArgs(agent.bridge, agent.socketPath);
    const joined = args.join(' ');
    expect(joined).toContain('-N ');
    expect(joined).toContain('-o ExitOnForwardFailure=yes');
    expect(joined).toContain('-o ServerAliveInterval=5');
    expect(joined).toContain('-o StreamLocalBindUnlink=yes');
    expect(joined).toContain(
      '-o StrictHostKeyChecking=yes -o UserKnownHostsFile=/etc/switchyard/ssh/known_hosts',
    );
    expect(joined).toContain('-i /etc/switchyard/ssh/demo.key -p 22 -l sy-demo');
    expect(joined).toContain('-R /var/lib/switchyard/demo/bridge/link.sock:/run/switchyard/demo/bridge.sock');
    expect(args.slice(-2)).toEqual(['--', 'build-box']);
  });

  it('starts ssh again when it exits, waiting longer after each quick failure', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-link-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const starts = path.join(dir, 'starts');
    // A client that fails at once, as ssh does when the worker cannot be reached.
    const link = createLink({
      command: process.execPath,
      args: [
        '-e',
        `require('fs').appendFileSync(${JSON.stringify(starts)}, Date.now() + '\\n'); process.exit(255)`,
      ],
      logger: silentLogger,
      backoff: { initialMs: 100, maxMs: 400, healthyMs: 10_000 },
    });
    link.start();
    await expect.poll(() => link.starts, { timeout: 10_000 }).toBeGreaterThanOrEqual(5);
    await link.stop();
    const stopped = link.starts;
    const times = readFileSync(starts, 'utf8').trim().split('\n').map(Number);
    const gaps = times.slice(1).map((t, i) => t - (times[i] ?? t));
    // 100, 200, 400 ms (plus the start of node each time): each wait at least the backoff's.
    expect(gaps[0]).toBeGreaterThanOrEqual(100);
    expect(gaps[1]).toBeGreaterThanOrEqual(200);
    expect(gaps[2]).toBeGreaterThanOrEqual(400);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(link.starts).toBe(stopped);
  });

  it('stop ends a running ssh client', async () => {
    const link = createLink({
      command: process.execPath,
      args: ['-e', 'setInterval(() => {}, 1000)'],
      logger: silentLogger,
    });
    link.start();
    await expect.poll(() => link.pid).toBeDefined();
    const pid = link.pid as number;
    await link.stop();
    expect(() => process.kill(pid, 0)).toThrow();
  });
});

describe('a bridge on another host: switchyard run', () => {
  it('runs the gateway and the link, not a bridge, for an agent whose bridge is on another host', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-run-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const started = path.join(dir, 'started');
    const supervisor = createSupervisor({
      // Each "service" notes its name and waits, as a service does until it is stopped.
      command: (service) => [
        '-e',
        `require('fs').appendFileSync(${JSON.stringify(started)}, '${service}\\n'); setInterval(() => {}, 1000)`,
      ],
      peer: 'link',
      logger: silentLogger,
    });
    supervisor.start();
    const names = () => (existsSync(started) ? readFileSync(started, 'utf8').trim().split('\n').sort() : []);
    await expect.poll(names, { timeout: 10_000 }).toEqual(['gateway', 'link']);
    await supervisor.stop();
    expect(names()).toEqual(['gateway', 'link']);
  });
});
