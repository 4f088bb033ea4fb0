/**
 * Where an agent's services keep their state, as an operator's shell must resolve it. The config's
 * defaults follow systemd's `$STATE_DIRECTORY`/`$RUNTIME_DIRECTORY`, which only the units' processes
 * have; `switchyard status` run from a root shell would otherwise look beside the config file. When the
 * config leaves the directories to their defaults and the units' directories exist, those are the
 * agent's (`StateDirectory=switchyard/%i`, `RuntimeDirectory=switchyard/%i`).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { AgentConfig } from './agent-config.js';

/** Where systemd's template units put an agent's directories. */
export const SYSTEMD_STATE_ROOT = '/var/lib/switchyard';
export const SYSTEMD_RUNTIME_ROOT = '/run/switchyard';

/** `agent` with its directories as its running services see them. */
export function asServicesSee(
  agent: AgentConfig,
  configFile: string,
  roots = { state: SYSTEMD_STATE_ROOT, runtime: SYSTEMD_RUNTIME_ROOT },
): AgentConfig {
  const fallback = path.join(path.dirname(configFile), '.switchyard', agent.name);
  const unitState = path.join(roots.state, agent.name);
  const unitRuntime = path.join(roots.runtime, agent.name);
  const stateDir =
    agent.stateDir === path.join(fallback, 'state') && existsSync(unitState) ? unitState : agent.stateDir;
  const runtimeDir =
    agent.runtimeDir === path.join(fallback, 'run') && existsSync(unitRuntime)
      ? unitRuntime
      : agent.runtimeDir;
  return {
    ...agent,
    stateDir,
    runtimeDir,
    socketPath:
      runtimeDir === agent.runtimeDir
        ? agent.socketPath
        : path.join(runtimeDir, path.basename(agent.socketPath)),
  };
}
