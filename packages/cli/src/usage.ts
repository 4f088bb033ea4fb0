/**
 * The text of `switchyard help`: every command in one screen, each with what it needs.
 */

/** What `switchyard help` prints. */
export const USAGE = `usage: switchyard [--config PATH] <command>

commands:
  up                 start everything: the agents in the config against Telegram, or the local
                     sandbox when no config with a bot token exists (this is what \`pnpm start\` runs)
  sandbox            run a demo agent against the local Telegram sandbox and print its web chat URL
  run AGENT          run the gateway and the bridge of AGENT as child processes (development); for a
                     bridge on another host, the gateway and the link
  gateway AGENT      run the gateway service of AGENT (systemd: switchyard-gateway@AGENT)
  bridge AGENT       run the bridge service of AGENT (systemd: switchyard-agent@AGENT)
  link AGENT         on the gateway's host, keep the ssh link to AGENT's bridge on another host
                     (bridge: in its config; systemd: switchyard-link@AGENT)
  add-agent NAME     create what agent NAME needs on this host (root): its config entry, user sy-NAME,
                     working directory, token credential; then run doctor as that user. Idempotent.
                     --allow ID[,ID] (new entry), --token-file PATH (else the token is read from
                     stdin), --work-dir, --state-dir, --runtime-dir, --api-root; config default
                     $SWITCHYARD_ETC/switchyard.yaml (/etc/switchyard); SWITCHYARD_NO_SYSTEM=1: no users
                     --bridge-host HOST: its bridge runs on HOST (--bridge-user, --bridge-port,
                     --identity KEY, --known-hosts FILE; the key is generated, the host key learnt);
                     prints what the worker needs, or writes it under --worker-root DIR
  stop-claude AGENT  stop AGENT's Claude process for good (a bridge stop leaves it running)
  doctor [AGENT]     check every agent (or AGENT) can start, and say how to fix what is wrong
  status [AGENT]     services, connection, Claude processes, turns, queues, prompts, pins, last error,
                     cost today and per session; --cost: every agent's cost today and this
                     month, and the total
  restart AGENT      restart the bridge (Claude processes are adopted); --hard ends them too
  logs AGENT [-f]    the agent's logs from journald (pretty at a terminal; -f follows)
  backup AGENT DEST  a consistent copy of the agent's state (online SQLite backup) into DEST; it holds
                     the agent's Claude login and conversations: keep it secret
  restore AGENT SRC  put a backup back as the agent's state (stopped first; the state there is moved
                     aside, Claude ended, owners set as the units expect)
  config check       validate the config and what it points at (token source, working directory,
                     claude binary); a line per agent (--json: every setting as it
                     will be used, secrets masked)
  unit-stopped AGENT the agent unit's ExecStopPost= hook: stop Claude if the unit is being stopped,
                     keep it for a restart (see deploy/README.md)
  version            this release, its commit and Node (also --version)
  help               this text

doctor, status and config check take --json. The config is --config PATH, else $SWITCHYARD_CONFIG, else
./switchyard.yaml.`;
