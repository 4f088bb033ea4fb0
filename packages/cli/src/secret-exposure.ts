/**
 * Which secrets of an agent's config its Claude could read, and what to refuse because of it.
 *
 * Under the systemd units the bot token comes from a root-only credential loaded into the gateway alone,
 * and `switchyard.yaml` is `root:switchyard 0640`, readable by every agent's user (they need it to
 * start). So a secret written in the YAML is readable by every agent's Claude on the host: an inline
 * token, webhook secret or voice key and secret-looking `claude.env` entries are refused there
 * ({@link unitSecretProblems}).
 *
 * Outside the units (`switchyard run`, the sandbox, a hand-started pair) one user runs the gateway, the
 * bridge and Claude: Claude can read the token whatever its source (`/proc/<gateway>/environ`, the YAML,
 * the token file, the gateway's database). That is said, not refused ({@link secretFindings}):
 * it is how development works, and only the units separate the users.
 */
import type { AgentConfig } from './agent-config.js';
import type { Finding } from './finding.js';

/** A variable name that looks like it holds a secret. */
const SECRET_NAME = /TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIAL|PRIVATE/i;

/**
 * Whether this process runs as a systemd service with directories of its own, as both Switchyard units
 * do: `$INVOCATION_ID` (every unit) with `$STATE_DIRECTORY`, `$RUNTIME_DIRECTORY` (`StateDirectory=`,
 * `RuntimeDirectory=`) or `$CREDENTIALS_DIRECTORY` (`LoadCredential=`). `$INVOCATION_ID` alone is not
 * enough: a desktop's terminal, itself a user service, hands it to the shells it starts.
 */
export function underSystemd(env: NodeJS.ProcessEnv): boolean {
  return (
    Boolean(env.INVOCATION_ID) &&
    Boolean(env.STATE_DIRECTORY || env.RUNTIME_DIRECTORY || env.CREDENTIALS_DIRECTORY)
  );
}

/**
 * The `claude.env` names of `agent` that look secret. Claude's own login variables (`ANTHROPIC_API_KEY`,
 * `CLAUDE_CODE_OAUTH_TOKEN`) are among them: in the YAML another agent's Claude could read and use them,
 * and under the units they have a place of their own, a root-only `EnvironmentFile=` of the agent's unit
 * (`ANTHROPIC_*` and `CLAUDE_*` pass Claude's environment allowlist), or the agent user's own login.
 */
export function secretLookingEnv(agent: AgentConfig): string[] {
  return Object.keys(agent.claude.env).filter((name) => SECRET_NAME.test(name));
}

/**
 * What a service started by systemd must refuse to run with, each a sentence with its fix; empty when
 * nothing. Outside systemd, always empty.
 */
export function unitSecretProblems(agent: AgentConfig, env: NodeJS.ProcessEnv): string[] {
  return underSystemd(env) ? secretsInConfig(agent) : [];
}

/** The secrets in `agent`'s config that the units refuse, each a sentence with its fix. */
function secretsInConfig(agent: AgentConfig): string[] {
  const problems: string[] = [];
  if (agent.token?.kind === 'inline') {
    problems.push(
      `agent "${agent.name}": an inline token in the config is readable by every agent's Claude on this host ` +
        '(the file is group switchyard, which every agent user is in): put it in ' +
        `/etc/switchyard/credentials/${agent.name}.token (root, 0600) and write token: { credential: telegram-token }`,
    );
  }
  const inlineHooks = (agent.webhooks?.hooks ?? [])
    .filter((h) => h.secret.kind === 'inline')
    .map((h) => h.name);
  if (inlineHooks.length > 0) {
    problems.push(
      `agent "${agent.name}": the inline secret of webhook ${inlineHooks.join(', ')} is readable by every agent's ` +
        'Claude on this host: put it in a root-only file and write secret: { credential: NAME } with ' +
        `LoadCredential=NAME:FILE in the gateway's unit (systemctl edit switchyard-gateway@${agent.name})`,
    );
  }
  if (agent.voice?.kind === 'http' && agent.voice.key?.kind === 'inline') {
    problems.push(
      `agent "${agent.name}": the inline voice.key is readable by every agent's Claude on this host: put it in a ` +
        "root-only file and write key: { credential: NAME } with LoadCredential=NAME:FILE in the gateway's unit " +
        `(systemctl edit switchyard-gateway@${agent.name})`,
    );
  }
  const names = secretLookingEnv(agent);
  if (names.length > 0) {
    problems.push(
      `agent "${agent.name}": claude.env ${names.join(', ')} look${names.length === 1 ? 's' : ''} secret, and ` +
        "every agent's Claude on this host can read the config: move " +
        `${names.length === 1 ? 'it' : 'them'} into a root-only EnvironmentFile= of this agent's unit ` +
        `(systemctl edit switchyard-agent@${agent.name}; deploy/README.md, "Claude itself"), or log the ` +
        `agent's user in to Claude (sudo -u sy-${agent.name} -H claude)`,
    );
  }
  return problems;
}

/**
 * Findings about who can read the agent's secrets, for `config check` and `doctor`. For an agent that
 * runs under the units (this process is a unit, or the token is a systemd credential, which only the
 * units provide) the refusals of {@link unitSecretProblems} as errors; elsewhere a warning that Claude,
 * run by the gateway's user, can read the bot token.
 */
export function secretFindings(agent: AgentConfig, index: number, env: NodeJS.ProcessEnv): Finding[] {
  const where = `agents[${index}]`;
  const units = underSystemd(env) || agent.token?.kind === 'credential';
  if (!units) {
    if (agent.token === undefined) return [];
    return [
      {
        level: 'warn',
        path: `${where}.token`,
        message:
          'outside systemd one user runs the gateway and Claude, so Claude (and whoever writes to the bot) ' +
          "can read the bot token: the gateway's environment, the config, the token file, its database",
        fix: 'for people you do not fully trust, run the agent under the systemd units (deploy/README.md)',
      },
    ];
  }
  return secretsInConfig(agent).map((message) => ({ level: 'error', path: where, message }));
}
