import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { configOf, countAccepted, isServiceArgv } from '../src/host-probe.js';
import { journalDestination, wantsJournal } from '../src/journal.js';
import { prettyLine } from '../src/log-view.js';
import { asServicesSee } from '../src/operator-paths.js';
import { bridgeRecords } from '../src/status.js';

describe('host probe', () => {
  it('recognises the service processes of one agent by their argv only', () => {
    const main = '/opt/switchyard/packages/cli/dist/main.js';
    expect(isServiceArgv(['node', main, '--config', '/c.yaml', 'bridge', 'demo'], 'bridge', 'demo')).toBe(
      true,
    );
    expect(
      isServiceArgv(['/usr/bin/node', '/usr/local/bin/switchyard', 'gateway', 'demo'], 'gateway', 'demo'),
    ).toBe(true);
    expect(isServiceArgv(['node', main, 'bridge', 'demo2'], 'bridge', 'demo')).toBe(false);
    expect(isServiceArgv(['node', main, 'gateway', 'demo'], 'bridge', 'demo')).toBe(false);
    expect(isServiceArgv(['vim', 'bridge', 'demo'], 'bridge', 'demo')).toBe(false);
  });

  it("tells a process's config file as the CLI resolves it, relative to that process's directory", () => {
    const main = '/opt/switchyard/packages/cli/dist/main.js';
    const here = process.cwd();
    expect(configOf(process.pid, ['node', main, '--config', 'a/b.yaml', 'bridge', 'x'])).toBe(
      path.join(here, 'a/b.yaml'),
    );
    expect(configOf(process.pid, ['node', main, '--config=/etc/s.yaml', 'gateway', 'x'])).toBe('/etc/s.yaml');
    // This process was not started with SWITCHYARD_CONFIG (its /proc environ is its start environment).
    if (!process.env.SWITCHYARD_CONFIG) {
      expect(configOf(process.pid, ['node', main, 'gateway', 'x'])).toBe(path.join(here, 'switchyard.yaml'));
    }
    expect(configOf(2 ** 22 + 1, ['node', main, 'gateway', 'x'])).toBeUndefined(); // no such process
  });

  it('counts the connections a listening socket has accepted in /proc/net/unix', () => {
    const table = [
      'Num       RefCount Protocol Flags    Type St Inode Path',
      '0000000000000000: 00000002 00000000 00010000 0001 01 1001 /run/switchyard/demo/bridge.sock',
      '0000000000000000: 00000003 00000000 00000000 0001 03 1002 /run/switchyard/demo/bridge.sock',
      '0000000000000000: 00000003 00000000 00000000 0001 03 1003',
      '0000000000000000: 00000003 00000000 00000000 0001 03 1004 /run/switchyard/other/bridge.sock',
    ].join('\n');
    expect(countAccepted(table, '/run/switchyard/demo/bridge.sock')).toBe(1);
    expect(countAccepted(table, '/run/switchyard/none/bridge.sock')).toBe(0);
  });
});

describe('status', () => {
  it('finds the single-session record and the per-conversation ones', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-status-'));
    try {
      writeFileSync(path.join(dir, 'bridge.json'), '{}');
      for (const key of ['-100123_7', '42']) {
        mkdirSync(path.join(dir, 'conversations', key), { recursive: true });
        writeFileSync(path.join(dir, 'conversations', key, 'bridge.json'), '{}');
      }
      expect(bridgeRecords(dir).map((r) => r.conversation)).toEqual(['default', '-100123_7', '42']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('resolves the directories of systemd units when the config leaves them to their defaults', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'sy-paths-'));
    try {
      const roots = { state: path.join(root, 'lib'), runtime: path.join(root, 'run') };
      mkdirSync(path.join(roots.state, 'demo'), { recursive: true });
      const file = '/etc/switchyard/switchyard.yaml';
      const [agent, pinned] = parseConfig(
        'agents:\n  - { name: demo, allow: [1], workDir: /w }\n  - { name: own, allow: [1], workDir: /w, stateDir: /srv/own }\n',
        file,
        { env: {}, cwd: '/' },
      ).agents;
      if (!agent || !pinned) throw new Error('agents missing');
      const seen = asServicesSee(agent, file, roots);
      expect(seen.stateDir).toBe(path.join(roots.state, 'demo'));
      expect(seen.socketPath).toBe('/etc/switchyard/.switchyard/demo/run/bridge.sock'); // no runtime dir yet
      expect(asServicesSee(pinned, file, roots).stateDir).toBe('/srv/own');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('logs', () => {
  it('prefixes each line with the syslog priority of its level for journald', () => {
    const lines: string[] = [];
    const journal = pino({ level: 'debug' }, journalDestination({ write: (line) => lines.push(line) }));
    journal.debug('d');
    journal.info('i');
    journal.warn('w');
    journal.error('e');
    journal.fatal('f');
    expect(lines.map((l) => l.slice(0, 3))).toEqual(['<7>', '<6>', '<4>', '<3>', '<2>']);
    expect(JSON.parse(lines[3]?.slice(3) ?? '')).toMatchObject({ level: 50, msg: 'e' });
  });

  it('uses the journal format under systemd unless told otherwise', () => {
    expect(wantsJournal({ JOURNAL_STREAM: '8:1234' })).toBe(true);
    expect(wantsJournal({ JOURNAL_STREAM: '8:1234', SWITCHYARD_LOG_FORMAT: 'json' })).toBe(false);
    expect(wantsJournal({ SWITCHYARD_LOG_FORMAT: 'journal' })).toBe(true);
    expect(wantsJournal({})).toBe(false);
  });

  it('pretty-prints pino lines and passes anything else through', () => {
    const line = JSON.stringify({
      level: 50,
      time: '2026-01-02T03:04:05.678Z',
      agent: 'demo',
      service: 'gateway',
      pid: 1,
      msg: 'send failed',
      event: 'x',
      n: 2,
    });
    expect(prettyLine(line)).toBe('03:04:05.678 ERROR demo/gateway: send failed event=x n=2');
    expect(prettyLine('-- Boot 1234 --')).toBe('-- Boot 1234 --');
  });
});
