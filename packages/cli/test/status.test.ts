/**
 * `switchyard status`'s cost: today's from the gateway's per-turn record, the session's from each
 * conversation's bridge record, joined by conversation.
 */
import { describe, expect, it } from 'vitest';
import {
  type AgentStatus,
  bridgeWhere,
  type ClaudeStatus,
  costStatus,
  formatStatus,
  isHealthy,
} from '../src/status.js';

const claude = (conversation: string, sessionCostUsd: number | undefined): ClaudeStatus => ({
  conversation,
  pid: 10,
  state: 'alive',
  sessionId: 's',
  uptimeSeconds: 5,
  runningTurn: undefined,
  crashLoop: false,
  sessionCostUsd,
});

const store = (costSince: Array<{ chatId: number; threadId: number | null; usd: number; turns: number }>) =>
  ({
    schemaVersion: 5,
    schemaCurrent: true,
    queued: [],
    runningTurns: [],
    openPrompts: 0,
    pinnedCards: 0,
    lastError: undefined,
    lastUpdateId: 1,
    costSince,
  }) satisfies AgentStatus['store'];

describe('status cost', () => {
  it("joins today's turn costs to each conversation's session cost", () => {
    const cost = costStatus(
      [claude('c100', 1.5), claude('c-200_t7', 0.25)],
      store([
        { chatId: 100, threadId: null, usd: 0.5, turns: 2 },
        { chatId: -200, threadId: 7, usd: 0.125, turns: 1 },
        { chatId: 300, threadId: null, usd: 0.01, turns: 1 },
      ]),
      false,
    );
    expect(cost).toEqual({
      todayUsd: 0.635,
      conversations: [
        { conversation: 'c100', todayUsd: 0.5, sessionUsd: 1.5 },
        { conversation: 'c-200_t7', todayUsd: 0.125, sessionUsd: 0.25 },
        { conversation: 'c300', todayUsd: 0.01, sessionUsd: undefined },
      ],
    });
    // One session for every chat: all of today's cost is its.
    expect(
      costStatus(
        [claude('cshared', 2)],
        store([
          { chatId: 1, threadId: null, usd: 0.5, turns: 1 },
          { chatId: 2, threadId: null, usd: 0.25, turns: 1 },
        ]),
        true,
      ).conversations,
    ).toEqual([{ conversation: 'cshared', todayUsd: 0.75, sessionUsd: 2 }]);
  });

  it("shows today's and each session's cost", () => {
    const claudes = [claude('c100', 1.5)];
    const gateway = store([{ chatId: 100, threadId: null, usd: 0.5, turns: 2 }]);
    const status: AgentStatus = {
      agent: 'demo',
      gateway: { running: [], listening: false },
      bridge: { running: [], connected: undefined, where: 'local' },
      claude: claudes,
      store: gateway,
      cost: costStatus(claudes, gateway, false),
    };
    const lines = formatStatus(status).split('\n');
    expect(lines).toContain('  cost     $0.500 today');
    expect(lines).toContain('  cost     [c100] $0.500 today, $1.50 this session');
  });

  it("names the agent's daily budget beside today's cost", () => {
    const claudes = [claude('c100', 1.5)];
    const gateway = store([{ chatId: 100, threadId: null, usd: 0.5, turns: 2 }]);
    const status: AgentStatus = {
      agent: 'demo',
      gateway: { running: [], listening: false },
      bridge: { running: [], connected: undefined, where: 'local' },
      claude: claudes,
      store: gateway,
      cost: { ...costStatus(claudes, gateway, false), dailyUsd: 20 },
    };
    expect(formatStatus(status).split('\n')).toContain('  cost     $0.500 today of the $20.00 daily budget');
  });
});

describe('status of a bridge on another host', () => {
  const remote = (port: number) => ({
    bridge: {
      host: 'build-box',
      socketPath: '/var/lib/switchyard/demo/bridge/link.sock',
      ssh: { user: 'sy-demo', port, identityFile: '/k', knownHosts: '/h', aliveIntervalSeconds: 5 },
    },
  });

  it('says where the bridge runs: local, or user@host (with the port unless 22)', () => {
    expect(bridgeWhere({ bridge: undefined })).toBe('local');
    expect(bridgeWhere(remote(22))).toBe('sy-demo@build-box');
    expect(bridgeWhere(remote(2222))).toBe('sy-demo@build-box:2222');
  });

  it("shows the link, the peer's host and release, and the round trip measured over the protocol", () => {
    const status: AgentStatus = {
      agent: 'demo',
      gateway: { running: [{ pid: 1, uptimeSeconds: 60 }], listening: true },
      bridge: { running: [], connected: true, where: 'sy-demo@build-box' },
      link: {
        running: [{ pid: 2, uptimeSeconds: 50 }],
        peerHost: 'build-box',
        peerRelease: '0.1.0-x',
        roundTripMs: 3,
        measuredSecondsAgo: 4,
      },
      claude: [],
      store: undefined,
      cost: { todayUsd: 0, conversations: [] },
    };
    const lines = formatStatus(status).split('\n');
    expect(lines).toContain('demo: serving');
    expect(lines).toContain(
      '  bridge   on sy-demo@build-box, connected (from build-box, release 0.1.0-x); round trip 3 ms (4s ago)',
    );
    expect(lines).toContain('  link     up (pid 2, up 50s)');
    // No bridge process on this host is expected for it; without its link it does not serve.
    expect(isHealthy(status)).toBe(true);
    expect(isHealthy({ ...status, link: { running: [] } })).toBe(false);
  });
});
