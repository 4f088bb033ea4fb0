/**
 * `switchyard restart AGENT [--hard]` and `switchyard logs AGENT [-f]`: the two operator actions that go
 * through the service manager. Under systemd (the template units installed) they are `systemctl` and
 * `journalctl` on the agent's two units; in development (`switchyard run`) a restart signals the bridge
 * process, which the dev supervisor starts again, and the logs are that command's stdout.
 *
 * A restart keeps the Claude processes: the new bridge adopts them, and running turns go on. `--hard`
 * also ends them (the next bridge resumes each session with `--resume`), for a Claude that is wedged.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '@switchyard/protocol';
import type { AgentConfig } from './agent-config.js';
import { findServiceProcesses } from './host-probe.js';
import { OperateError } from './operate-error.js';
import { stopClaude } from './services.js';

const run = promisify(execFile);

/** The agent's two units. */
export function unitsOf(agent: string): { gateway: string; bridge: string } {
  return { gateway: `switchyard-gateway@${agent}.service`, bridge: `switchyard-agent@${agent}.service` };
}

/** Whether systemd runs here and knows the agent's units. */
export async function unitsInstalled(agent: string): Promise<boolean> {
  return (await unitsHere(agent)) === 'running';
}

/** Where this host's systemd looks for the units and whether systemd runs; tests give their own. */
export interface UnitHost {
  /** Whether systemd is this host's init (`/run/systemd/system` exists, as sd_booted(3) checks). */
  systemd: boolean;
  /** Where install.sh puts the template units (`$SWITCHYARD_SYSTEMD_DIR`, else /etc/systemd/system). */
  unitDir: string;
}

/** This host, as {@link UnitHost} describes it. */
export function thisHost(env: NodeJS.ProcessEnv = process.env): UnitHost {
  return {
    systemd: existsSync('/run/systemd/system'),
    unitDir: env.SWITCHYARD_SYSTEMD_DIR || '/etc/systemd/system',
  };
}

/**
 * The agent's units here: `running` (systemd runs and knows them), `not-running` (their files are
 * installed but systemd is not this host's init, so nothing runs them: a container), or `absent`.
 */
export async function unitsHere(
  agent: string,
  host: UnitHost = thisHost(),
): Promise<'running' | 'not-running' | 'absent'> {
  if (!host.systemd) {
    return existsSync(path.join(host.unitDir, 'switchyard-agent@.service')) ? 'not-running' : 'absent';
  }
  try {
    await run('systemctl', ['cat', unitsOf(agent).bridge]);
    return 'running';
  } catch {
    return 'absent';
  }
}

/** Restarts the agent's bridge (and with `hard`, its Claude processes); resolves with what was done. */
export async function restartAgent(
  agent: AgentConfig,
  hard: boolean,
  logger: Logger,
  configFile?: string,
): Promise<string> {
  const units = unitsOf(agent.name);
  if (await unitsInstalled(agent.name)) {
    if (!hard) {
      await run('systemctl', ['restart', units.bridge]);
      return `restarted ${units.bridge}; its Claude processes were adopted`;
    }
    await run('systemctl', ['stop', units.bridge]);
    const outcome = await stopClaude(agent, logger);
    await run('systemctl', ['start', units.bridge]);
    return `restarted ${units.bridge} and its Claude processes (${outcome.replace('_', ' ')})`;
  }
  const bridges = findServiceProcesses('bridge', agent.name, configFile);
  if (bridges.length === 0) {
    throw new OperateError(
      `agent "${agent.name}" has no running bridge and no systemd units: start it with \`switchyard run ${agent.name}\``,
    );
  }
  if (hard) {
    throw new OperateError(
      'a hard restart needs the systemd units; in development stop `switchyard run` (Ctrl-C ends Claude too) and start it again',
    );
  }
  for (const { pid } of bridges) process.kill(pid, 'SIGTERM');
  return `signalled the bridge (pid ${bridges.map((b) => b.pid).join(', ')}); \`switchyard run\` starts it again`;
}

/**
 * Streams the agent's logs to stdout: `journalctl` on both units (following with `follow`), pretty when
 * stdout is a terminal. Resolves with journalctl's exit status.
 */
export async function showLogs(
  agent: AgentConfig,
  follow: boolean,
  host: UnitHost = thisHost(),
): Promise<number> {
  const units = await unitsHere(agent.name, host);
  const elsewhere = `its logs are the output of \`switchyard run ${agent.name}\` (e.g. \`switchyard run ${agent.name} | tee ${agent.name}.log\`)`;
  if (units === 'not-running') {
    throw new OperateError(
      `the units are installed (${host.unitDir}) but systemd is not running on this host, so they never ran agent "${agent.name}" and journald has no logs of it: run the agent with \`switchyard run ${agent.name}\`; ${elsewhere}`,
    );
  }
  if (units === 'absent') {
    throw new OperateError(`agent "${agent.name}" has no systemd units here: in development ${elsewhere}`);
  }
  const { gateway, bridge } = unitsOf(agent.name);
  const args = ['-u', gateway, '-u', bridge, '-o', 'cat', '--no-pager', ...(follow ? ['-f'] : ['-n', '200'])];
  const pretty = process.stdout.isTTY === true;
  const child = spawn('journalctl', args, { stdio: ['ignore', pretty ? 'pipe' : 'inherit', 'inherit'] });
  if (pretty && child.stdout) {
    const { prettyLines } = await import('./log-view.js');
    prettyLines(child.stdout, process.stdout);
  }
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}
