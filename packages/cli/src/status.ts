/**
 * `switchyard status [AGENT]`: what each agent is doing, read from the outside so it works whether the
 * services run under systemd or `switchyard run`, and while they are down. Sources: the service
 * processes and the socket's connections (`host-probe.ts`), the gateway's SQLite opened read-only
 * (queues, running turns, prompts, pins, the last error), and every `bridge.json` under the bridge's
 * state directory (one per conversation, or the single one of a single-session bridge) with the Claude
 * process it records, checked for liveness by pid and start time as the bridge itself does.
 *
 * A bridge on another host (`bridge:` in the config) is not seen from here: its state and Claude are on
 * the worker. What is seen is the link's process, and the gateway's record of its peer
 * (`bridge-peer.json`): the host and release that connected, and the last ping's round trip over the
 * channel, which is the link's round trip (measured by the protocol, through ssh).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  type ChildRecord,
  conversationDir,
  type Liveness,
  liveness,
  SHARED_KEY,
} from '@switchyard/agent-bridge';
import {
  formatUsd,
  type GatewayInspection,
  inspectGatewayStore,
  localDay,
  readPeerRecord,
} from '@switchyard/gateway';
import { conversationKey, describeError } from '@switchyard/protocol';
import type { AgentConfig } from './agent-config.js';
import { acceptedConnections, findServiceProcesses, type ServiceProcess } from './host-probe.js';
import { serviceStateDir } from './services.js';

/** One agent's state as `status` reports it (also its `--json` shape). */
export interface AgentStatus {
  agent: string;
  gateway: { running: ServiceProcess[]; listening: boolean };
  bridge: {
    running: ServiceProcess[];
    connected: boolean | undefined;
    /** `local`, or `user@host` (`:port` unless 22) for a bridge on another host. */
    where: string;
  };
  /** A bridge on another host: its ssh link from this host, and what the gateway knows of the peer. */
  link?: LinkStatus;
  claude: ClaudeStatus[];
  /** The gateway's store, or why it could not be read. */
  store: GatewayInspection | { unreadable: string } | undefined;
  /** What the agent spent: today (turns ended since local midnight) and in each conversation's session. */
  cost: CostStatus;
}

/** The link of a bridge on another host, as this host sees it. */
export interface LinkStatus {
  running: ServiceProcess[];
  /** The host and release the connected (or last) bridge named in its handshake. */
  peerHost?: string | undefined;
  peerRelease?: string | undefined;
  /** The last ping's round trip over the channel, and how long ago it was measured. */
  roundTripMs?: number | undefined;
  measuredSecondsAgo?: number | undefined;
  /** The last bridge the gateway refused at its handshake (another version), in its words. */
  refused?: string | undefined;
}

/** Costs in USD as the bridge reported them (the CLI's `total_cost_usd`). */
export interface CostStatus {
  /** Every conversation's turns that ended today (the agent's time zone, UTC when none), summed. */
  todayUsd: number;
  /** The agent's daily budget, when it has one. */
  dailyUsd?: number | undefined;
  /** One entry per conversation with a recorded session or a turn ended today. */
  conversations: Array<{ conversation: string; todayUsd: number; sessionUsd: number | undefined }>;
}

/** One recorded Claude process (one per live conversation). */
export interface ClaudeStatus {
  /** The conversation key (`conversations/<key>/bridge.json`), or `default` for a single-session bridge. */
  conversation: string;
  pid: number | undefined;
  state: Liveness | 'none';
  sessionId: string | undefined;
  uptimeSeconds: number | undefined;
  runningTurn: string | undefined;
  crashLoop: boolean;
  /** What the conversation has cost in all its Claude processes (the bridge's record). */
  sessionCostUsd: number | undefined;
}

/**
 * Reads everything `status` shows for `agent` of `configFile`. Never throws for what it cannot read; it
 * reports it.
 */
export function agentStatus(agent: AgentConfig, configFile?: string): AgentStatus {
  const storePath = path.join(serviceStateDir(agent, 'gateway'), 'gateway.sqlite');
  let store: AgentStatus['store'];
  if (existsSync(storePath)) {
    try {
      store = inspectGatewayStore(storePath, localDay(Date.now(), agent.timezone ?? 'UTC').start);
    } catch (err) {
      store = { unreadable: describeError(err) };
    }
  }
  const connections = acceptedConnections(agent.socketPath);
  // A remote bridge's records are on its worker: none are read here.
  const claude = agent.bridge ? [] : bridgeRecords(serviceStateDir(agent, 'bridge')).map(claudeStatus);
  return {
    agent: agent.name,
    gateway: {
      running: findServiceProcesses('gateway', agent.name, configFile),
      listening: existsSync(agent.socketPath),
    },
    bridge: {
      running: findServiceProcesses('bridge', agent.name, configFile),
      connected: connections === undefined ? undefined : connections > 0,
      where: bridgeWhere(agent),
    },
    ...(agent.bridge ? { link: linkStatus(agent, configFile) } : {}),
    claude,
    store,
    cost: {
      ...costStatus(claude, store, agent.conversations === 'shared'),
      dailyUsd: agent.budget?.dailyUsd,
    },
  };
}

/** Where the agent's bridge runs, as `status` says it. */
export function bridgeWhere(agent: Pick<AgentConfig, 'bridge'>): string {
  const remote = agent.bridge;
  if (!remote) return 'local';
  return `${remote.ssh.user}@${remote.host}${remote.ssh.port === 22 ? '' : `:${remote.ssh.port}`}`;
}

function linkStatus(agent: AgentConfig, configFile: string | undefined, now = Date.now()): LinkStatus {
  const record = readPeerRecord(serviceStateDir(agent, 'gateway'));
  const trip = record?.connected ? record.roundTrip : undefined;
  const refused =
    record?.refused && !(record.connected && record.since > record.refused.at)
      ? record.refused.message
      : undefined;
  return {
    running: findServiceProcesses('link', agent.name, configFile),
    peerHost: record?.peer?.host,
    peerRelease: record?.peer?.release,
    roundTripMs: trip?.ms,
    measuredSecondsAgo: trip ? Math.max(0, Math.round((now - trip.at) / 1000)) : undefined,
    refused,
  };
}

/**
 * Joins the gateway's per-turn costs of today with the bridge's per-session totals, by conversation
 * (the bridge's directory name for it; with `conversations: shared` every chat is the one session).
 */
export function costStatus(
  claude: readonly ClaudeStatus[],
  store: AgentStatus['store'],
  shared: boolean,
): CostStatus {
  const byConversation = new Map<string, { todayUsd: number; sessionUsd: number | undefined }>();
  for (const c of claude) byConversation.set(c.conversation, { todayUsd: 0, sessionUsd: c.sessionCostUsd });
  let todayUsd = 0;
  const today = store && !('unreadable' in store) ? store.costSince : [];
  for (const row of today) {
    const route =
      row.threadId === null ? { chatId: row.chatId } : { chatId: row.chatId, threadId: row.threadId };
    const name = conversationDir(shared ? SHARED_KEY : conversationKey(route));
    const entry = byConversation.get(name) ?? { todayUsd: 0, sessionUsd: undefined };
    entry.todayUsd += row.usd;
    byConversation.set(name, entry);
    todayUsd += row.usd;
  }
  return {
    todayUsd,
    conversations: [...byConversation].map(([conversation, c]) => ({ conversation, ...c })),
  };
}

/** Every `bridge.json` under `dir` (depth-first, sorted), with the conversation it belongs to. */
export function bridgeRecords(dir: string): Array<{ conversation: string; file: string }> {
  const found: Array<{ conversation: string; file: string }> = [];
  const walk = (at: string, depth: number) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(at, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(at, entry.name);
      if (entry.isFile() && entry.name === 'bridge.json') {
        const rel = path.relative(dir, at);
        found.push({
          conversation: rel === '' ? 'default' : rel.replace(/^conversations\//, ''),
          file: full,
        });
      } else if (entry.isDirectory() && depth < 4) {
        walk(full, depth + 1);
      }
    }
  };
  walk(dir, 0);
  return found;
}

interface SnapshotView {
  child?: ChildRecord;
  session?: { sessionId?: string; turn?: { id?: string }; costUsd?: number };
  crashLoop?: boolean;
}

function claudeStatus({ conversation, file }: { conversation: string; file: string }): ClaudeStatus {
  let snapshot: SnapshotView = {};
  try {
    snapshot = JSON.parse(readFileSync(file, 'utf8')) as SnapshotView;
  } catch {
    // a torn or foreign file: report what is known (nothing)
  }
  const child = snapshot.child;
  const state = child ? liveness(child) : 'none';
  return {
    conversation,
    pid: child?.pid,
    state,
    sessionId: snapshot.session?.sessionId,
    uptimeSeconds: child && state === 'alive' ? Math.round((Date.now() - child.startedAt) / 1000) : undefined,
    runningTurn: snapshot.session?.turn?.id,
    crashLoop: snapshot.crashLoop === true,
    sessionCostUsd: typeof snapshot.session?.costUsd === 'number' ? snapshot.session.costUsd : undefined,
  };
}

/** Whether the agent is serving: gateway and bridge running and connected. */
export function isHealthy(status: AgentStatus): boolean {
  // A bridge on another host is not seen from here; its link is, and the connection through it.
  const bridgeSide = status.link ? status.link.running.length > 0 : status.bridge.running.length > 0;
  return status.gateway.running.length > 0 && bridgeSide && status.bridge.connected !== false;
}

/** `status` for a person: a few lines per agent. */
export function formatStatus(status: AgentStatus, now = Date.now()): string {
  const procs = (list: ServiceProcess[]) =>
    list.length === 0
      ? 'down'
      : list.map((p) => `up (pid ${p.pid}, ${duration(p.uptimeSeconds)})`).join(', ');
  const lines = [
    `${status.agent}: ${isHealthy(status) ? 'serving' : 'NOT serving'}`,
    `  gateway  ${procs(status.gateway.running)}${status.gateway.listening ? '' : ', no socket'}`,
  ];
  const connected =
    status.bridge.connected === undefined ? '' : status.bridge.connected ? ', connected' : ', not connected';
  const link = status.link;
  if (link) {
    const peer = [link.peerHost && `from ${link.peerHost}`, link.peerRelease && `release ${link.peerRelease}`]
      .filter(Boolean)
      .join(', ');
    const trip =
      link.roundTripMs === undefined
        ? ''
        : `; round trip ${link.roundTripMs} ms (${ago((link.measuredSecondsAgo ?? 0) * 1000)} ago)`;
    lines.push(
      `  bridge   on ${status.bridge.where}${connected}${status.bridge.connected && peer ? ` (${peer})` : ''}${trip}`,
    );
    lines.push(`  link     ${procs(link.running)}`);
    if (link.refused) lines.push(`  link     the gateway refused a bridge: ${link.refused.slice(0, 300)}`);
  } else {
    lines.push(`  bridge   local, ${procs(status.bridge.running)}${connected}`);
  }
  if (status.claude.length === 0) lines.push('  claude   none recorded');
  for (const c of status.claude) {
    const what =
      c.state === 'alive'
        ? `pid ${c.pid}, ${duration(c.uptimeSeconds)}`
        : c.state === 'none'
          ? 'not running'
          : `${c.state} (pid ${c.pid})`;
    lines.push(
      `  claude   [${c.conversation}] ${what}, session ${c.sessionId ?? '-'}${c.runningTurn ? `, turn ${c.runningTurn} running` : ''}${c.crashLoop ? ', CRASH LOOP' : ''}`,
    );
  }
  const spent = status.cost.conversations.filter((c) => c.todayUsd > 0 || (c.sessionUsd ?? 0) > 0);
  if (spent.length > 0) {
    const budget =
      status.cost.dailyUsd === undefined ? '' : ` of the ${formatUsd(status.cost.dailyUsd)} daily budget`;
    lines.push(`  cost     ${formatUsd(status.cost.todayUsd)} today${budget}`);
    for (const c of spent) {
      lines.push(
        `  cost     [${c.conversation}] ${formatUsd(c.todayUsd)} today, ${c.sessionUsd === undefined ? 'session unknown' : `${formatUsd(c.sessionUsd)} this session`}`,
      );
    }
  }
  const store = status.store;
  if (store === undefined) lines.push('  store    none yet');
  else if ('unreadable' in store) lines.push(`  store    unreadable: ${store.unreadable}`);
  else {
    const queued = store.queued.reduce((sum, q) => sum + q.count, 0);
    lines.push(
      `  turns    ${store.runningTurns.length} running; ${queued} message(s) queued for the bridge; ${store.openPrompts} open prompt(s); ${store.pinnedCards} pinned card(s)`,
    );
    if (store.lastError) {
      lines.push(
        `  error    ${ago(now - store.lastError.endedAt)} ago: ${store.lastError.error.slice(0, 200)}`,
      );
    }
    if (!store.schemaCurrent)
      lines.push(`  store    schema version ${store.schemaVersion} is not this build's`);
  }
  return lines.join('\n');
}

function duration(seconds: number | undefined): string {
  return seconds === undefined ? 'uptime unknown' : `up ${ago(seconds * 1000)}`;
}

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172_800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86_400)}d`;
}
