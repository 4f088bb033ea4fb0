/**
 * `switchyard status --cost`: every agent's spending today and this month, from its gateway's spend
 * record, in the agent's own time zone, with the total. There was no view across agents at all.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openGatewayStore } from '@switchyard/gateway';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { agentCost, costTotals, formatCosts, localMonthStart } from '../src/cost.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'sy-cost-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const NOW = Date.parse('2026-02-10T12:00:00Z');
const DAY = 24 * 3600_000;

function agents() {
  const yaml = [
    'agents:',
    `  - { name: alpha, allow: [1], workDir: /w, stateDir: ${path.join(root, 'alpha')} }`,
    `  - { name: beta, allow: [1], workDir: /w, stateDir: ${path.join(root, 'beta')}, timezone: Pacific/Auckland }`,
    `  - { name: gamma, allow: [1], workDir: /w, stateDir: ${path.join(root, 'gamma')} }`,
    '',
  ].join('\n');
  return parseConfig(yaml, path.join(root, 'switchyard.yaml'), { env: {}, cwd: root }).agents;
}

/** Turns that ended at the given times, each costing `usd`, in the agent's gateway store. */
function spent(stateDir: string, turns: Array<[at: number, usd: number]>): void {
  mkdirSync(path.join(stateDir, 'gateway'), { recursive: true });
  const store = openGatewayStore(path.join(stateDir, 'gateway', 'gateway.sqlite'));
  turns.forEach(([at, usd], i) => {
    store.spendStarted(`t${i}`, { chatId: 1 }, 1);
    store.spendEnded(`t${i}`, { chatId: 1 }, usd, at);
  });
  store.close();
}

describe('status --cost', () => {
  it('sums each agent today and this month in its own zone, says which have no record, and totals', () => {
    const [alpha, beta, gamma] = agents();
    if (!alpha || !beta || !gamma) throw new Error('three agents');
    // alpha (UTC): today, earlier this month, and last month (not counted).
    spent(alpha.stateDir, [
      [NOW - 3600_000, 0.5],
      [NOW - 5 * DAY, 1.25],
      [Date.parse('2026-01-31T23:00:00Z'), 4],
    ]);
    // beta (Auckland, UTC+13 in February): 2026-01-31T12:00Z is already 1 February there.
    spent(beta.stateDir, [[Date.parse('2026-01-31T12:00:00Z'), 2]]);
    const costs = [alpha, beta, gamma].map((agent) => agentCost(agent, NOW));
    expect(costs).toEqual([
      {
        agent: 'alpha',
        day: '2026-02-10',
        month: '2026-02',
        timeZone: 'UTC',
        todayUsd: 0.5,
        monthUsd: 1.75,
        turnsToday: 1,
        turnsThisMonth: 2,
      },
      expect.objectContaining({ agent: 'beta', timeZone: 'Pacific/Auckland', todayUsd: 0, monthUsd: 2 }),
      { agent: 'gamma', unknown: expect.stringMatching(/^no record: its gateway has not run here/) },
    ]);
    expect(costTotals(costs)).toEqual({ todayUsd: 0.5, monthUsd: 3.75 });
    const lines = formatCosts(costs);
    expect(lines[0]).toMatch(/^agent +today +this month$/);
    expect(lines[1]).toMatch(/^alpha +\$0\.500 +\$1\.75 +2 turn\(s\) in 2026-02 \(UTC\)$/);
    expect(lines.at(-1)).toMatch(/^total +\$0\.500 +\$3\.75$/);
  });

  it('finds the start of the local month, across a zone far from UTC', () => {
    expect(localMonthStart(NOW, 'UTC')).toBe(Date.parse('2026-02-01T00:00:00Z'));
    expect(localMonthStart(NOW, 'Pacific/Auckland')).toBe(Date.parse('2026-01-31T11:00:00Z'));
    expect(localMonthStart(Date.parse('2026-03-01T00:30:00Z'), 'America/New_York')).toBe(
      Date.parse('2026-02-01T05:00:00Z'),
    );
  });
});
