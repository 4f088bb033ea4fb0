/**
 * "Stop means stop, restart keeps Claude" under systemd. The agent unit has `KillMode=process`, so
 * systemd signals only the bridge and the claude processes outlive it; its `ExecStopPost=` runs
 * `switchyard unit-stopped AGENT` once the bridge is gone, for a stop, a restart and a crash alike.
 * This module tells them apart by the job systemd is running for the unit, and ends Claude only for a
 * stop.
 *
 * The decision is a pure function of `systemctl list-jobs` output ({@link jobOf}, {@link claudeOnStop});
 * {@link unitStopped} is the shell that asks systemd and calls the bridge's real stop.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Logger } from '@switchyard/protocol';
import type { AgentConfig } from './agent-config.js';
import { stopClaude } from './services.js';

/** The job systemd runs for a unit, as `systemctl list-jobs` names its type; `none` when there is none. */
export type UnitJob = 'stop' | 'restart' | 'start' | 'other' | 'none';

/** The systemd unit of an agent's bridge. */
export function agentUnit(agent: string): string {
  return `switchyard-agent@${agent}.service`;
}

/**
 * The type of the job `systemctl list-jobs --no-legend` lists for `unit` (lines `ID UNIT TYPE STATE`).
 * A restart shows as `restart` for as long as its stop half runs, which is when `ExecStopPost=` runs.
 */
export function jobOf(listJobs: string, unit: string): UnitJob {
  for (const line of listJobs.split('\n')) {
    const [, name, type] = line.trim().split(/\s+/);
    if (name !== unit) continue;
    return type === 'stop' || type === 'restart' || type === 'start' ? type : 'other';
  }
  return 'none';
}

/**
 * What becomes of the claude processes when the bridge's unit has stopped: ended for a `stop` job
 * (`systemctl stop`, shutdown, a conflict); kept for a restart (`systemctl restart`, `/restart`) and when
 * no job runs (the bridge exited by itself and `Restart=` brings it back to adopt them).
 */
export function claudeOnStop(job: UnitJob): 'stop' | 'keep' {
  return job === 'stop' ? 'stop' : 'keep';
}

/** What {@link unitStopped} did. */
export type UnitStopOutcome =
  | { claude: 'kept'; job: UnitJob }
  | { claude: 'stopped' | 'not_running' | 'unknown'; job: 'stop' }
  | { claude: 'kept'; job: 'unknown'; error: string };

/**
 * The `ExecStopPost=` hook: asks systemd which job runs for the agent's unit and, for a stop, ends the
 * agent's Claude ({@link stopClaude}: SIGTERM, grace, SIGKILL, record cleared). When systemd cannot be
 * asked, Claude is kept: ending a turn on a guess is worse than a process an operator can stop by hand.
 */
export async function unitStopped(options: {
  agent: AgentConfig;
  logger: Logger;
  /** The `systemctl` to ask (default: the one on PATH). */
  systemctl?: string;
}): Promise<UnitStopOutcome> {
  const { agent, logger } = options;
  const unit = agentUnit(agent.name);
  const log = logger.child({ component: 'unit-stopped', unit });
  let listed: string;
  try {
    const run = promisify(execFile);
    listed = (
      await run(options.systemctl ?? 'systemctl', ['list-jobs', '--no-legend', '--no-pager', unit], {
        timeout: 10_000,
      })
    ).stdout;
  } catch (err) {
    const error = (err as Error).message.split('\n')[0] ?? String(err);
    log.warn(
      { event: 'unit_job_unknown', error },
      `cannot ask systemd why ${unit} stopped; Claude is left running (switchyard stop-claude ${agent.name} ends it)`,
    );
    return { claude: 'kept', job: 'unknown', error };
  }
  const job = jobOf(listed, unit);
  if (claudeOnStop(job) === 'keep') {
    log.info({ event: 'claude_kept', job }, 'the bridge stopped for a restart; Claude keeps running');
    return { claude: 'kept', job };
  }
  const claude = await stopClaude(agent, logger);
  log.info({ event: 'claude_stopped', outcome: claude }, 'the unit was stopped; so is Claude');
  return { claude, job: 'stop' };
}
