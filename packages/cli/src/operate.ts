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
import { promisify } from 'node:util';
import type { Logger } from '@switchyard/protocol';
import type { AgentConfig } from './config.js';
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
  if (!existsSync('/run/systemd/system')) return false;
  try {
    await run('systemctl', ['cat', unitsOf(agent).bridge]);
    return true;
  } catch {
    return false;
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
export async function showLogs(agent: AgentConfig, follow: boolean): Promise<number> {
  if (!(await unitsInstalled(agent.name))) {
    throw new OperateError(
      `agent "${agent.name}" has no systemd units here: in development its logs are the output of \`switchyard run ${agent.name}\` (e.g. \`switchyard run ${agent.name} | tee ${agent.name}.log\`)`,
    );
  }
  const units = unitsOf(agent.name);
  const args = [
    '-u',
    units.gateway,
    '-u',
    units.bridge,
    '-o',
    'cat',
    '--no-pager',
    ...(follow ? ['-f'] : ['-n', '200']),
  ];
  const pretty = process.stdout.isTTY === true;
  const child = spawn('journalctl', args, { stdio: ['ignore', pretty ? 'pipe' : 'inherit', 'inherit'] });
  if (pretty && child.stdout) {
    const { prettyLines } = await import('./log-view.js');
    prettyLines(child.stdout, process.stdout);
  }
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}
