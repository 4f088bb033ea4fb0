/**
 * `switchyard doctor [AGENT]`: every first-run mistake we know of, each with its fix. Host facts (Node,
 * Linux, systemd units), what the config points at (`config-check.ts`), whether `claude` has
 * credentials, the bot token as Telegram sees it (`getMe`), whether another process polls the same bot
 * or a webhook is set (`getUpdates` answers 409), the runtime directory, and the gateway's SQLite file.
 *
 * Only reads: it creates no directory, confirms no update (no `offset` is sent) and opens SQLite
 * read-only. An unreachable Telegram is a warning (the host may simply be offline now), never a crash.
 * The verdict is whether each agent can start: any `error` finding says it cannot.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { checkGatewayStore } from '@switchyard/gateway';
import { describeError } from '@switchyard/protocol';
import type { AgentConfig, ConfigEnvironment } from './agent-config.js';
import { readToken } from './bot-token.js';
import { claudeLogin, describeMissingLogin } from './claude-login.js';
import { checkAgentResources } from './config-check.js';
import { ConfigError } from './config-error.js';
import type { Finding } from './finding.js';
import { findServiceProcesses } from './host-probe.js';
import { type PasswdEntry, passwdEntry } from './passwd.js';
import { serviceStateDir } from './services.js';

/** What the doctor may use of the outside world; tests give it a local Telegram and no systemd. */
export interface DoctorEnvironment extends ConfigEnvironment {
  /** Per Telegram request. Default 5000 ms. */
  telegramTimeoutMs?: number;
  /**
   * How long the doctor's own poll waits for another poller to cut it short, in whole seconds (Telegram's
   * `timeout`). Default 2; tests against a local Telegram, whose other poller polls again at once, pass 1.
   */
  pollProbeSeconds?: number;
  /** Whether systemd runs this host (default: `/run/systemd/system` exists). */
  systemd?: boolean;
  nodeVersion?: string;
  platform?: NodeJS.Platform;
  /** A user's passwd entry by name (default: read from `/etc/passwd`); the agent's user is `sy-NAME`. */
  userEntry?(name: string): Pick<PasswdEntry, 'uid' | 'home'> | undefined;
  /** This process's uid (default `process.getuid()`). */
  uid?: number;
}

/** The findings for one agent, host checks first. */
export interface DoctorReport {
  agent: string;
  canStart: boolean;
  findings: Finding[];
}

/** How long the doctor's own poll waits for another poller to cut it short (see `pollProbeSeconds`). */
const POLL_PROBE_SECONDS = 2;

/** The minimum Node version, as package.json's `engines` says. */
const NODE_MIN: readonly [number, number] = [20, 19];

/** Runs every check for `agent` (the `index`-th in `configFile`). */
export async function doctorAgent(
  agent: AgentConfig,
  index: number,
  configFile: string,
  environment: DoctorEnvironment,
): Promise<DoctorReport> {
  const findings: Finding[] = [
    ...hostFindings(environment),
    { level: 'ok', path: 'config', message: `${configFile} is valid` },
    ...checkAgentResources(agent, index, configFile, environment),
  ];
  if (agent.token !== undefined) findings.push(loginFinding(agent, index, environment));
  findings.push(...(await telegramFindings(agent, index, configFile, environment)));
  findings.push(...runtimeFinding(agent, index, configFile));
  findings.push(storeFinding(agent));
  if (environment.systemd ?? existsSync('/run/systemd/system')) findings.push(...(await unitFindings(agent)));
  return { agent: agent.name, canStart: !findings.some((f) => f.level === 'error'), findings };
}

function hostFindings(environment: DoctorEnvironment): Finding[] {
  const version = environment.nodeVersion ?? process.versions.node;
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const nodeOk = major > NODE_MIN[0] || (major === NODE_MIN[0] && minor >= NODE_MIN[1]);
  const platform = environment.platform ?? process.platform;
  return [
    nodeOk
      ? { level: 'ok', path: 'node', message: `Node ${version}` }
      : {
          level: 'error',
          path: 'node',
          message: `Node ${version} is older than ${NODE_MIN.join('.')}`,
          fix: 'install Node 20 LTS (20.19 or later) from nodejs.org or your distribution',
        },
    platform === 'linux'
      ? { level: 'ok', path: 'platform', message: 'Linux' }
      : {
          level: 'error',
          path: 'platform',
          message: `${platform}: Switchyard needs Linux (/proc, FIFOs)`,
          fix: 'run it in a Linux VM or container',
        },
  ];
}

/**
 * Whether the agent's Claude will have credentials. Claude runs as the agent's user: under the units
 * `sy-NAME`, with its passwd home as HOME (the agent unit sets the same). A doctor run by someone else
 * (`sudo switchyard doctor`) therefore looks in that user's home, not the caller's, and counts only the
 * agent's `claude.env`, not the caller's own ANTHROPIC_API_KEY. Without an agent user (development)
 * Claude runs as this user, with this environment.
 */
function loginFinding(agent: AgentConfig, index: number, environment: DoctorEnvironment): Finding {
  const where = `agents[${index}].claude.env`;
  const name = `sy-${agent.name}`;
  const user = (environment.userEntry ?? passwdEntry)(name);
  const uid = environment.uid ?? process.getuid?.();
  const other = user !== undefined && user.uid !== uid;
  const login = other
    ? claudeLogin({ ...agent.claude.env }, user.home)
    : claudeLogin({ ...environment.env, ...agent.claude.env }, environment.env.HOME);
  const whose = other ? `agent user ${name}` : 'this user';
  switch (login.kind) {
    case 'env':
      return { level: 'ok', path: where, message: `claude authenticates with ${login.variable}` };
    case 'file':
      return { level: 'ok', path: where, message: `claude is logged in as ${whose} (${login.file})` };
    case 'unreadable':
      return {
        level: 'warn',
        path: where,
        message: `cannot read ${login.file} (${login.code}), so whether claude is logged in as ${whose} is unknown`,
        fix: `run the doctor as root (sudo switchyard doctor ${agent.name}) or as ${name}`,
      };
    case 'none':
      return {
        level: 'error',
        path: where,
        message: `claude has no credentials for ${whose} (${describeMissingLogin(login)}, no ANTHROPIC_API_KEY)`,
        // A key in claude.env would be in the YAML every agent's user reads: the units refuse it.
        fix:
          user !== undefined
            ? `log the agent's user in to Claude: sudo -u ${name} -H claude (then /login); or give this agent's unit alone a key in a root-only EnvironmentFile= (systemctl edit switchyard-agent@${agent.name}; deploy/README.md, "Claude itself")`
            : 'log in to Claude as this user (`claude`, then /login), or export ANTHROPIC_API_KEY before `switchyard run`',
      };
  }
}

/** `getMe` (is the token valid) and `getUpdates?timeout=0` (does anyone else poll it). */
async function telegramFindings(
  agent: AgentConfig,
  index: number,
  configFile: string,
  environment: DoctorEnvironment,
): Promise<Finding[]> {
  const where = `agents[${index}].token`;
  let token: string | undefined;
  try {
    token = readToken(agent, environment, configFile);
  } catch (err) {
    if (err instanceof ConfigError) return []; // already reported by the resource checks
    throw err;
  }
  if (!token) return [];
  const probeSeconds = environment.pollProbeSeconds ?? POLL_PROBE_SECONDS;
  const call = async (method: string, query = '') => {
    const res = await fetch(`${agent.apiRoot}/bot${token}/${method}${query}`, {
      signal: AbortSignal.timeout((environment.telegramTimeoutMs ?? 5000) + probeSeconds * 1000),
    });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as TelegramReply };
  };
  let me: Awaited<ReturnType<typeof call>>;
  try {
    me = await call('getMe');
  } catch (err) {
    return [
      {
        level: 'warn',
        path: 'telegram',
        message: `cannot reach ${agent.apiRoot} (${describeError(err)}); the token was not checked`,
        fix: 'check the network, a proxy, or agents[].apiRoot',
      },
    ];
  }
  if (me.status === 401 || me.status === 404) {
    return [
      {
        level: 'error',
        path: where,
        message: 'Telegram rejects this bot token (401 Unauthorized)',
        fix: 'copy the token again from @BotFather (/mybots → API Token); it changes when revoked',
      },
    ];
  }
  if (!me.body.ok) {
    return [
      { level: 'warn', path: 'telegram', message: `getMe failed: ${me.status} ${me.body.description ?? ''}` },
    ];
  }
  const findings: Finding[] = [
    { level: 'ok', path: where, message: `the token is bot @${me.body.result?.username ?? '?'}` },
  ];
  if (findServiceProcesses('gateway', agent.name, configFile).length > 0) {
    findings.push({ level: 'ok', path: 'telegram', message: "this agent's gateway runs and polls the bot" });
    return findings;
  }
  try {
    // timeout 0 meets a webhook (409 at once); a short long poll meets a live poller, whose next
    // getUpdates ends ours with 409 (it sees one 409 itself and polls again, as pollers do).
    let updates = await call('getUpdates', '?timeout=0&limit=1');
    if (updates.status !== 409) updates = await call('getUpdates', `?timeout=${probeSeconds}&limit=1`);
    if (updates.status === 409) {
      findings.push({
        level: 'error',
        path: where,
        message: `another process uses this bot token: ${updates.body.description ?? '409 Conflict'}`,
        fix: 'stop the other poller (another host or an old deployment), or delete its webhook; each bot polls from one place',
      });
    } else {
      findings.push({ level: 'ok', path: 'telegram', message: 'no other process polls this bot' });
    }
  } catch (err) {
    findings.push({ level: 'warn', path: 'telegram', message: `getUpdates failed: ${describeError(err)}` });
  }
  return findings;
}

interface TelegramReply {
  ok?: boolean;
  description?: string;
  result?: { username?: string };
}

/** A leftover socket; its length is `checkSockets`'s (config-check.ts). */
function runtimeFinding(agent: AgentConfig, index: number, configFile: string): Finding[] {
  if (existsSync(agent.socketPath) && findServiceProcesses('gateway', agent.name, configFile).length === 0) {
    return [
      {
        level: 'warn',
        path: `agents[${index}].runtimeDir`,
        message: `${agent.socketPath} exists but no gateway runs: a leftover (the gateway replaces it at start)`,
      },
    ];
  }
  return [];
}

function storeFinding(agent: AgentConfig): Finding {
  const file = path.join(serviceStateDir(agent, 'gateway'), 'gateway.sqlite');
  if (!existsSync(file)) return { level: 'ok', path: 'sqlite', message: `${file} is created at first start` };
  try {
    const check = checkGatewayStore(file);
    return check.ok
      ? { level: 'ok', path: 'sqlite', message: `${file} opens (schema ${check.schemaVersion})` }
      : {
          level: 'error',
          path: 'sqlite',
          message: `${file}: ${check.problem}`,
          fix: 'restore the last backup (deploy/README.md, "Backup and restore")',
        };
  } catch (err) {
    return {
      level: 'error',
      path: 'sqlite',
      message: `cannot open ${file}: ${describeError(err)}`,
      fix: "check its owner and mode (the gateway's user reads and writes it)",
    };
  }
}

async function unitFindings(agent: AgentConfig): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const unit of [`switchyard-gateway@${agent.name}.service`, `switchyard-agent@${agent.name}.service`]) {
    let state: string;
    try {
      state = (await promisify(execFile)('systemctl', ['is-enabled', unit])).stdout.trim();
    } catch (err) {
      state = String((err as { stdout?: string }).stdout ?? '').trim() || 'unknown';
    }
    findings.push(
      state === 'enabled'
        ? { level: 'ok', path: 'systemd', message: `${unit} is enabled` }
        : state === 'not-found'
          ? {
              level: 'warn',
              path: 'systemd',
              message: `${unit} is not installed`,
              fix: 'run deploy/install.sh (or use `switchyard run` for development)',
            }
          : {
              level: 'warn',
              path: 'systemd',
              message: `${unit} is ${state}`,
              fix: `systemctl enable --now ${unit}`,
            },
    );
  }
  return findings;
}
