/**
 * The operator's commands on agents that run elsewhere (their units, or `switchyard run`): `doctor`,
 * `status`, `restart`, `logs`, `backup` and `restore`. Each reads the agent as its running services see it
 * (operator-paths.ts), prints for a person or, with `--json`, for a program, and resolves with the exit
 * status the usage text documents.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { AgentConfig, Config, ConfigEnvironment } from './agent-config.js';
import { backupAgent } from './backup.js';
import { formatFindings } from './config-check.js';
import { agentCost, costTotals, formatCosts } from './cost.js';
import { doctorAgent } from './doctor.js';
import { createLogger } from './log.js';
import { restartAgent, showLogs } from './operate.js';
import { OperateError } from './operate-error.js';
import { asServicesSee } from './operator-paths.js';
import { passwdEntry } from './passwd.js';
import { backupHoldsLogin, LOGIN_IN_BACKUP, type RestoreOwners, restoreAgent } from './restore.js';
import { agentStatus, formatStatus, isHealthy } from './status.js';

/** `doctor [AGENT]`: 0 when every chosen agent can start, else 1. */
export async function doctorCommand(
  config: Config,
  chosen: readonly AgentConfig[],
  environment: ConfigEnvironment,
  json: boolean,
): Promise<number> {
  const reports = [];
  for (const agent of chosen) {
    const index = config.agents.indexOf(agent);
    reports.push(await doctorAgent(asServicesSee(agent, config.file), index, config.file, environment));
  }
  const ok = reports.every((r) => r.canStart);
  if (json) console.log(JSON.stringify({ ok, agents: reports }, null, 2));
  else {
    for (const report of reports) {
      console.log(`${report.agent}: ${report.canStart ? 'can start' : 'CANNOT start'}`);
      for (const line of formatFindings(report.findings, { all: true })) console.log(`  ${line}`);
    }
  }
  return ok ? 0 : 1;
}

/** `status [AGENT]`: 0 when every chosen agent serves, else 3. */
export function statusCommand(config: Config, chosen: readonly AgentConfig[], json: boolean): number {
  const statuses = chosen.map((agent) => agentStatus(asServicesSee(agent, config.file), config.file));
  if (json) console.log(JSON.stringify({ agents: statuses }, null, 2));
  else console.log(statuses.map((s) => formatStatus(s)).join('\n\n'));
  return statuses.every(isHealthy) ? 0 : 3;
}

/**
 * `status --cost [AGENT]`: every chosen agent's spending today and this month, and the total
 * (cost.ts); 0, or 1 when an agent's record could not be read.
 */
export function costCommand(
  config: Config,
  chosen: readonly AgentConfig[],
  json: boolean,
  now = Date.now(),
): number {
  const costs = chosen.map((agent) => agentCost(asServicesSee(agent, config.file), now));
  if (json) console.log(JSON.stringify({ agents: costs, total: costTotals(costs) }, null, 2));
  else console.log(formatCosts(costs).join('\n'));
  return costs.some((c) => 'unknown' in c && c.unknown.startsWith('cannot read')) ? 1 : 0;
}

/** `restart AGENT [--hard]`. */
export async function restartCommand(config: Config, agent: AgentConfig, hard: boolean): Promise<number> {
  const seen = asServicesSee(agent, config.file);
  const logger = createLogger({ agent: agent.name, service: 'restart' });
  console.error(await restartAgent(seen, hard, logger, config.file));
  return 0;
}

/** `logs AGENT [-f]`: journalctl's exit status. */
export function logsCommand(agent: AgentConfig, follow: boolean): Promise<number> {
  return showLogs(agent, follow);
}

/** `backup AGENT DEST`: 0 when files were copied, 1 when there were none. */
export async function backupCommand(config: Config, agent: AgentConfig, dest: string): Promise<number> {
  const seen = asServicesSee(agent, config.file);
  const target = path.resolve(dest);
  if (!hasFiles(seen.stateDir)) {
    throw new OperateError(
      `agent "${seen.name}" has no state to back up: ${seen.stateDir} is missing or empty (the agent has not run on this host, or stateDir points elsewhere); nothing was written to ${target}`,
    );
  }
  const manifest = await backupAgent(seen, target);
  console.error(`backed up ${manifest.files.length} file(s) of agent "${seen.name}" to ${target}`);
  if (backupHoldsLogin(manifest)) {
    console.error(
      `it holds the agent's Claude login (${LOGIN_IN_BACKUP}) and its conversations: keep it as secret as the login itself`,
    );
  }
  return manifest.files.length > 0 ? 0 : 1;
}

/** `restore AGENT SRC`: a backup back as the agent's state (restore.ts); 0 when done. */
export async function restoreCommand(config: Config, agent: AgentConfig, source: string): Promise<number> {
  const seen = asServicesSee(agent, config.file);
  const logger = createLogger({ agent: agent.name, service: 'restore' });
  const report = await restoreAgent({
    agent: seen,
    source: path.resolve(source),
    configFile: config.file,
    logger,
    owners: unitOwners(agent.name),
  });
  console.error(`restored ${report.files} file(s) of agent "${agent.name}" into ${seen.stateDir}`);
  if (report.movedAside) console.error(`the state that was there is kept in ${report.movedAside}`);
  if (report.holdsLogin) console.error(`with its Claude login (${LOGIN_IN_BACKUP})`);
  console.error(
    `start it: systemctl start switchyard-gateway@${agent.name} switchyard-agent@${agent.name} (or switchyard run ${agent.name})`,
  );
  return 0;
}

/** Under the units (root, with the users add-agent made) who owns each service's directory. */
function unitOwners(agent: string): RestoreOwners | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const gateway = passwdEntry('switchyard');
  const bridge = passwdEntry(`sy-${agent}`);
  if (!gateway || !bridge) return undefined;
  return { gateway: { uid: gateway.uid, gid: bridge.gid }, bridge: { uid: bridge.uid, gid: bridge.gid } };
}

/** Whether `dir` exists and holds anything. */
export function hasFiles(dir: string): boolean {
  try {
    return readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}
