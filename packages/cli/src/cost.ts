/**
 * `switchyard status --cost`: what every agent's turns cost today and this month, and the total, from
 * each gateway's `spend` table (the record its daily budgets count: what the bridge reported for each
 * turn as it ended). Days and months are the agent's own (`timezone:`, else UTC), as its budget's are.
 *
 * Read-only: each gateway's SQLite is opened read-only, so it runs beside running gateways. An agent
 * whose gateway has not run here has no record, which is said rather than shown as $0.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { formatUsd, localDay, readGatewaySpend } from '@switchyard/gateway';
import { describeError } from '@switchyard/protocol';
import type { AgentConfig } from './agent-config.js';
import { serviceStateDir } from './services.js';

/** One agent's spending, or why it is not known. */
export type AgentCost =
  | {
      agent: string;
      /** The local day and month counted (`2026-02-03`, `2026-02`) in `timeZone`. */
      day: string;
      month: string;
      timeZone: string;
      todayUsd: number;
      monthUsd: number;
      turnsToday: number;
      turnsThisMonth: number;
    }
  | { agent: string; unknown: string };

/** The first moment of the local month `at` falls in, in `timeZone`. */
export function localMonthStart(at: number, timeZone: string): number {
  let day = localDay(at, timeZone);
  // Step back a day at a time (at most 30): the zone's own calendar, DST days included.
  while (!day.day.endsWith('-01')) day = localDay(day.start - 1, timeZone);
  return day.start;
}

/** Reads one agent's spending from its gateway's SQLite (the agent as its services see it). */
export function agentCost(agent: AgentConfig, now: number): AgentCost {
  const file = path.join(serviceStateDir(agent, 'gateway'), 'gateway.sqlite');
  if (!existsSync(file)) {
    return { agent: agent.name, unknown: `no record: its gateway has not run here (${file})` };
  }
  const timeZone = agent.timezone ?? 'UTC';
  const today = localDay(now, timeZone);
  const monthStart = localMonthStart(now, timeZone);
  try {
    const [day, month] = readGatewaySpend(file, [today.start, monthStart]).since;
    return {
      agent: agent.name,
      day: today.day,
      month: today.day.slice(0, 7),
      timeZone,
      todayUsd: day?.usd ?? 0,
      monthUsd: month?.usd ?? 0,
      turnsToday: day?.turns ?? 0,
      turnsThisMonth: month?.turns ?? 0,
    };
  } catch (err) {
    return { agent: agent.name, unknown: `cannot read ${file}: ${describeError(err)}` };
  }
}

/** The totals over the agents whose spending is known. */
export function costTotals(costs: readonly AgentCost[]): { todayUsd: number; monthUsd: number } {
  let todayUsd = 0;
  let monthUsd = 0;
  for (const cost of costs) {
    if ('unknown' in cost) continue;
    todayUsd += cost.todayUsd;
    monthUsd += cost.monthUsd;
  }
  return { todayUsd, monthUsd };
}

/** The table `status --cost` prints: an agent a line, then the total. */
export function formatCosts(costs: readonly AgentCost[]): string[] {
  const width = Math.max(5, ...costs.map((c) => c.agent.length));
  const row = (name: string, today: string, month: string, note = '') =>
    `${name.padEnd(width)}  ${today.padStart(10)}  ${month.padStart(10)}${note ? `  ${note}` : ''}`;
  const lines = [row('agent', 'today', 'this month')];
  for (const cost of costs) {
    if ('unknown' in cost) lines.push(row(cost.agent, '-', '-', cost.unknown));
    else {
      lines.push(
        row(
          cost.agent,
          formatUsd(cost.todayUsd),
          formatUsd(cost.monthUsd),
          `${cost.turnsThisMonth} turn(s) in ${cost.month}${cost.timeZone === 'UTC' ? ' (UTC)' : ` (${cost.timeZone})`}`,
        ),
      );
    }
  }
  const total = costTotals(costs);
  lines.push(row('total', formatUsd(total.todayUsd), formatUsd(total.monthUsd)));
  return lines;
}
