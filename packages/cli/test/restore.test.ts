/**
 * `switchyard restore`: a backup back as the agent's state, replacing the rsync-and-chown by hand the
 * deploy README used to prescribe. The state that was there is moved aside, never lost; a backup of
 * another agent, or an incomplete one, changes nothing; under the units each service's directory is
 * owned as its unit expects. A backup holds the agent's Claude login, and says so.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspectGatewayStore, openGatewayStore } from '@switchyard/gateway';
import { silentLogger } from '@switchyard/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backupAgent } from '../src/backup.js';
import { parseConfig } from '../src/config.js';
import { backupHoldsLogin, restoreAgent } from '../src/restore.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'sy-restore-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function agentNamed(name: string) {
  const file = path.join(root, 'switchyard.yaml');
  const yaml = `agents:\n  - { name: ${name}, allow: [1], workDir: /w, stateDir: ${path.join(root, 'state')} }\n`;
  return {
    agent: parseConfig(yaml, file, { env: {}, cwd: root }).agents[0] as NonNullable<
      ReturnType<typeof parseConfig>['agents'][0]
    >,
    file,
  };
}

/** An agent's state as the units leave it: the gateway's SQLite, the bridge's records, the Claude login. */
function makeState(stateDir: string): void {
  mkdirSync(path.join(stateDir, 'gateway'), { recursive: true });
  openGatewayStore(path.join(stateDir, 'gateway', 'gateway.sqlite')).close();
  mkdirSync(path.join(stateDir, 'bridge', '.claude'), { recursive: true });
  writeFileSync(
    path.join(stateDir, 'bridge', '.claude', '.credentials.json'),
    '{"claudeAiOauth":{"accessToken":"x"}}',
  );
  writeFileSync(path.join(stateDir, 'bridge', 'bridge.json'), '{"at":"backup"}');
  mkdirSync(path.join(stateDir, 'files'));
  writeFileSync(path.join(stateDir, 'files', 'photo.jpg'), 'jpeg');
}

describe('restore', () => {
  it('puts a backup back, moving the state that was there aside, and says it holds the Claude login', async () => {
    const { agent, file } = agentNamed('demo');
    makeState(agent.stateDir);
    const backup = path.join(root, 'backup');
    const manifest = await backupAgent(agent, backup);
    expect(backupHoldsLogin(manifest)).toBe(true);

    // Later: the state moved on, and a file appeared that the backup does not have.
    writeFileSync(path.join(agent.stateDir, 'bridge', 'bridge.json'), '{"at":"later"}');
    writeFileSync(path.join(agent.stateDir, 'files', 'later.txt'), 'later');
    const report = await restoreAgent({
      agent,
      source: backup,
      configFile: file,
      logger: silentLogger,
      owners: undefined,
      now: new Date('2026-02-03T04:05:06Z'),
    });
    expect(report).toEqual({
      files: manifest.files.length,
      movedAside: `${agent.stateDir}.before-restore-20260203T040506Z`,
      holdsLogin: true,
    });
    expect(readFileSync(path.join(agent.stateDir, 'bridge', 'bridge.json'), 'utf8')).toBe('{"at":"backup"}');
    expect(existsSync(path.join(agent.stateDir, 'files', 'later.txt'))).toBe(false);
    expect(inspectGatewayStore(path.join(agent.stateDir, 'gateway', 'gateway.sqlite')).schemaCurrent).toBe(
      true,
    );
    expect(statSync(path.join(agent.stateDir, 'bridge')).mode & 0o777).toBe(0o700);
    // Nothing of what was there is lost.
    expect(readFileSync(path.join(report.movedAside ?? '', 'files', 'later.txt'), 'utf8')).toBe('later');
  });

  it("refuses another agent's backup and an incomplete one, changing nothing", async () => {
    const { agent, file } = agentNamed('demo');
    makeState(agent.stateDir);
    const backup = path.join(root, 'backup');
    await backupAgent(agent, backup);
    const other = agentNamed('other');
    const restore = (target: typeof agent) =>
      restoreAgent({
        agent: target,
        source: backup,
        configFile: file,
        logger: silentLogger,
        owners: undefined,
      });
    await expect(restore(other.agent)).rejects.toThrow(
      `${backup} is a backup of agent "demo", not "other": restore it with switchyard restore demo ${backup}`,
    );
    rmSync(path.join(backup, 'files', 'photo.jpg'));
    await expect(restore(agent)).rejects.toThrow('lacks 1 file(s) its manifest lists (files/photo.jpg)');
    await expect(
      restoreAgent({ agent, source: root, configFile: file, logger: silentLogger, owners: undefined }),
    ).rejects.toThrow('is not a backup (no manifest.json');
    expect(readdirSync(root).filter((name) => name.includes('before-restore'))).toEqual([]);
  });

  it.skipIf(process.getuid?.() !== 0)('owns each directory as its unit expects', async () => {
    const { agent, file } = agentNamed('demo');
    makeState(agent.stateDir);
    const backup = path.join(root, 'backup');
    await backupAgent(agent, backup);
    await restoreAgent({
      agent,
      source: backup,
      configFile: file,
      logger: silentLogger,
      owners: { gateway: { uid: 40001, gid: 40002 }, bridge: { uid: 40002, gid: 40002 } },
    });
    const owner = (p: string) => {
      const s = statSync(path.join(agent.stateDir, p));
      return `${s.uid}:${s.gid}`;
    };
    expect(owner('gateway/gateway.sqlite')).toBe('40001:40002');
    expect(owner('files/photo.jpg')).toBe('40001:40002');
    expect(owner('bridge')).toBe('40002:40002');
    expect(owner('bridge/.claude/.credentials.json')).toBe('40002:40002');
  });
});
