/**
 * The renderer: `(state, now) → Telegram HTML`. Pure and total: it never throws, writes only the tags
 * in `CARD_TAGS`, escapes every string that came from outside, and always returns fewer than
 * {@link MESSAGE_LIMIT} UTF-16 units (Telegram's limit counts the text after parsing, which is never
 * longer than the markup, so measuring the markup is safe).
 *
 * Layout, top to bottom: the header (stage and elapsed time), the request, what runs now, one row per
 * sub-agent, the finished steps with repeats collapsed, a stuck warning, and on the final render the cost.
 * When the card is too long the oldest steps go first, with a line saying how many; if the rest still
 * does not fit, sub-agent rows and then the live lines are reduced, and the header always stays.
 */
import { cutText } from './cut.js';
import { escapeHtml, tag } from './html.js';
import { toolGroupSummary } from './label.js';
import {
  type CardState,
  isActive,
  isEnded,
  type PendingPrompt,
  runningSubagents,
  type Stage,
  type StepRow,
  type SubagentRow,
  stageOf,
} from './state.js';

/** Telegram's limit on a message's text. Rendered cards are always shorter. */
export const MESSAGE_LIMIT = 4096;

/** How the card is rendered. Every field has a default. */
export interface RenderOptions {
  /** Show the stuck warning once nothing happened for this long while something runs. Default 2 minutes. */
  readonly stuckAfterMs?: number;
  /** Upper bound on the output's length; clamped to below {@link MESSAGE_LIMIT}. Default 4095. */
  readonly maxLength?: number;
  /** The model is a stand-in (the sandbox's scripted model): the cost line says it was never spent. */
  readonly simulatedCost?: boolean;
}

/** Default for {@link RenderOptions.stuckAfterMs}. */
export const DEFAULT_STUCK_AFTER_MS = 120_000;

const HEADER = {
  working: { icon: '⚙️', word: 'Working' },
  waiting: { icon: '❓', word: 'Waiting for your answer' },
  done: { icon: '✅', word: 'Done' },
  failed: { icon: '❌', word: 'Failed' },
  interrupted: { icon: '⏹', word: 'Interrupted' },
  stopped: { icon: '⏸', word: 'Stopped tracking' },
} as const satisfies Readonly<Record<Stage, { icon: string; word: string }>>;

const SUBAGENT_ICON = {
  running: '🔄',
  moved: '↪️',
  abandoned: '⏸',
  success: '✅',
  error: '❌',
  killed: '⛔',
} as const satisfies Readonly<Record<SubagentRow['status'], string>>;

/** How much of each part is shown, per level of reduction (0 = everything). */
const LEVELS = [
  { request: 200, live: 5, subagents: 12, narration: true },
  { request: 160, live: 2, subagents: 4, narration: true },
  { request: 120, live: 1, subagents: 0, narration: false },
  { request: 80, live: 0, subagents: 0, narration: false },
] as const;

type Level = (typeof LEVELS)[number];

/** `42s`, `3m 05s`, `1h 02m`. Negative or non-finite durations read as `0s`. */
export function formatDuration(ms: number): string {
  const total = Number.isFinite(ms) && ms > 0 ? Math.floor(ms / 1000) : 0;
  if (total < 60) return `${total}s`;
  const minutes = Math.floor(total / 60);
  if (minutes < 60) return `${minutes}m ${String(total % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}

/** `950`, `12.3k`, `4.1M`. */
function formatTokens(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '0';
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** Renders the card as Telegram HTML. Never throws; the result is always below the message limit. */
export function render(state: CardState, now: number, options: RenderOptions = {}): string {
  const max = Math.min(MESSAGE_LIMIT - 1, Math.max(200, options.maxLength ?? MESSAGE_LIMIT - 1));
  const stuckAfter = options.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS;
  // Level-independent, so grouped once however many levels are tried.
  const groups = stepGroups(state.steps);
  for (const level of LEVELS) {
    const fixed = composeFixed(state, now, stuckAfter, level, options.simulatedCost === true);
    const html = withSteps(state, groups, fixed, max);
    if (html !== undefined) return html;
  }
  // The last level is bounded well below any limit >= 200; this is the belt to its braces.
  return cutText(header(state, now), max);
}

interface Fixed {
  readonly top: readonly string[];
  readonly bottom: readonly string[];
}

function composeFixed(
  state: CardState,
  now: number,
  stuckAfter: number,
  level: Level,
  simulated: boolean,
): Fixed {
  const top = [header(state, now)];
  if (state.request !== '') top.push(`<i>${escapeHtml(`“${cutText(state.request, level.request)}”`)}</i>`);
  if (state.error !== undefined) top.push(`❗ ${escapeHtml(cutText(state.error, level.request))}`);
  const live = isEnded(state) ? [] : liveLines(state, now, level);
  if (live.length > 0) top.push('', ...live);
  const rows = subagentLines(state, now, level);
  if (rows.length > 0) top.push('', ...rows);
  const bottom: string[] = [];
  const silent = now - state.lastEventAt;
  if (isActive(state) && silent >= stuckAfter) {
    bottom.push(`⚠️ No events for ${formatDuration(silent)}; it may be stuck.`);
  }
  const footer = costLine(state, simulated);
  if (footer !== undefined) bottom.push(footer);
  return { top, bottom };
}

function header(state: CardState, now: number): string {
  const stage = stageOf(state);
  const { icon, word } = HEADER[stage];
  let text = `${icon} <b>${word}</b> · ${formatDuration(workEnd(state, now) - state.startedAt)}`;
  if (stage === 'stopped') {
    text += state.stopReason === 'idle' ? ' · no events for a long time' : ' · a new request started';
  }
  const background = runningSubagents(state);
  if (isEnded(state) && background > 0) {
    text += ` · ${background} sub-agent${background === 1 ? '' : 's'} still running`;
  }
  return text;
}

/**
 * Until when the card's work ran: its turn's end, or later, while or until the sub-agents it shows ran
 * (a background sub-agent outlives its turn, and "Done · 0s" after five seconds of its work is wrong).
 * A card closed without its turn ending (superseded, idle) stops counting when it closed: its running
 * sub-agents moved on or were given up.
 */
function workEnd(state: CardState, now: number): number {
  if (state.endedAt === undefined) return now;
  if (state.stopReason !== undefined) return state.endedAt;
  let end = state.endedAt;
  for (const row of state.subagents) {
    if (row.status === 'running') return now;
    // Only a sub-agent's own end counts: an abandoned row's end is when the card gave up on it.
    const ended = row.status === 'success' || row.status === 'error' || row.status === 'killed';
    if (ended && row.endedAt !== undefined) end = Math.max(end, row.endedAt);
  }
  return end;
}

function liveLines(state: CardState, now: number, level: Level): string[] {
  const lines: string[] = [];
  for (const prompt of state.prompts.slice(0, Math.max(1, level.live))) lines.push(promptLine(prompt));
  if (level.narration && state.narration !== undefined) {
    lines.push(`💬 <i>${escapeHtml(cutText(state.narration, 200))}</i>`);
  }
  // A running Task/Agent call has its own sub-agent row; do not show it twice.
  const agents = new Set(state.subagents.map((row) => row.id));
  const running = state.steps.filter((s) => s.status === 'running' && !agents.has(s.id));
  // The newest calls are the ones a user wants to see; older parallel ones are counted.
  if (running.length > level.live) lines.push(`… ${running.length - level.live} more running`);
  for (const step of running.slice(Math.max(0, running.length - level.live))) {
    lines.push(`▶ ${escapeHtml(step.label)} · ${formatDuration(now - step.startedAt)}`);
  }
  if (running.length === 0 && state.thinking) {
    lines.push(
      state.thought === undefined ? '💭 Thinking…' : `💭 <i>${escapeHtml(cutText(state.thought, 200))}</i>`,
    );
  }
  return lines;
}

/**
 * What an open prompt asks. A permission's summary already names the action in words that follow "wants
 * to" ("write hello.md (…)", the prompt message's own title), so the tool's name is not said again; it
 * is shown only when there is no summary. A question has neither.
 */
function promptLine(prompt: PendingPrompt): string {
  if (prompt.summary !== undefined) return `🔐 Wants to ${escapeHtml(cutText(prompt.summary, 120))}`;
  if (prompt.toolName !== undefined) return `🔐 Wants to use ${tag('b', prompt.toolName)}`;
  return '❓ A question for you';
}

function subagentLines(state: CardState, now: number, level: Level): string[] {
  const rows = state.subagents;
  if (rows.length === 0) return [];
  const running = runningSubagents(state);
  const title = `<b>Sub-agents</b> · ${running} running, ${rows.length - running} finished`;
  if (level.subagents === 0) return [title];
  // Running rows first in interest, then the newest finished; shown in start order, children under parents.
  const chosen = new Set<string>();
  for (const row of rows) if (row.status === 'running' && chosen.size < level.subagents) chosen.add(row.id);
  for (let i = rows.length - 1; i >= 0 && chosen.size < level.subagents; i -= 1) {
    const row = rows[i];
    if (row !== undefined) chosen.add(row.id);
  }
  const lines = [title];
  for (const row of ordered(rows)) {
    if (!chosen.has(row.id)) continue;
    lines.push(subagentLine(row, now, rows));
  }
  const hidden = rows.length - chosen.size + state.droppedSubagents;
  if (hidden > 0) lines.push(`… ${hidden} more sub-agent${hidden === 1 ? '' : 's'}`);
  return lines;
}

/** Start order, with each child right after its parent (depth-first). Cycles and orphans stay top-level. */
function ordered(rows: readonly SubagentRow[]): SubagentRow[] {
  const ids = new Set(rows.map((r) => r.id));
  const children = new Map<string, SubagentRow[]>();
  const roots: SubagentRow[] = [];
  for (const row of rows) {
    if (row.parentId !== undefined && ids.has(row.parentId)) {
      const list = children.get(row.parentId) ?? [];
      list.push(row);
      children.set(row.parentId, list);
    } else roots.push(row);
  }
  const out: SubagentRow[] = [];
  const seen = new Set<string>();
  const visit = (row: SubagentRow): void => {
    if (seen.has(row.id)) return;
    seen.add(row.id);
    out.push(row);
    for (const child of children.get(row.id) ?? []) visit(child);
  };
  for (const row of roots) visit(row);
  for (const row of rows) visit(row); // rows caught in a parent cycle
  return out;
}

function depthOf(row: SubagentRow, rows: readonly SubagentRow[]): number {
  let depth = 0;
  let parent = row.parentId;
  while (parent !== undefined && depth < 3) {
    const up = rows.find((r) => r.id === parent);
    if (up === undefined) break;
    depth += 1;
    parent = up.parentId;
  }
  return depth;
}

function subagentLine(row: SubagentRow, now: number, rows: readonly SubagentRow[]): string {
  const indent = '   '.repeat(depthOf(row, rows));
  const prefix = indent === '' ? '' : `${indent}↳ `;
  const description = row.description === '' ? '' : ` ${escapeHtml(cutText(row.description, 80))}`;
  const parts: string[] = [];
  const current = row.running[row.running.length - 1];
  if (row.status === 'running') {
    parts.push(current === undefined ? 'thinking' : escapeHtml(current.label));
  } else if (row.status === 'moved') {
    parts.push('continues in the next card');
  } else if (row.status === 'abandoned') {
    parts.push('no word from it for a long time');
  }
  parts.push(`${row.toolCount} tool${row.toolCount === 1 ? '' : 's'}`);
  if (row.errorCount > 0) parts.push(`${row.errorCount} failed`);
  parts.push(formatDuration((row.endedAt ?? now) - row.startedAt));
  return `${prefix}${SUBAGENT_ICON[row.status]} ${tag('b', row.agentType)}${description} — ${parts.join(' · ')}`;
}

function costLine(state: CardState, simulated: boolean): string | undefined {
  if (!isEnded(state)) return undefined;
  const parts: string[] = [];
  if (state.costUsd !== undefined) parts.push(`$${state.costUsd.toFixed(state.costUsd < 1 ? 3 : 2)}`);
  // An interrupted turn reports a cost but no tokens: "0 in / 0 out" would be untrue, so it is left out.
  if (state.usage !== undefined && state.usage.inputTokens + state.usage.outputTokens > 0) {
    parts.push(`${formatTokens(state.usage.inputTokens)} in / ${formatTokens(state.usage.outputTokens)} out`);
  }
  if (parts.length === 0) return undefined;
  return simulated ? `💰 ${parts.join(' · ')} (simulated: nothing was spent)` : `💰 ${parts.join(' · ')}`;
}

/** One line of the finished-steps list and how many steps it stands for. */
interface StepGroup {
  readonly line: string;
  readonly count: number;
}

/** Finished steps, consecutive successes of one tool collapsed: "Read 12 files". */
function stepGroups(steps: readonly StepRow[]): StepGroup[] {
  const groups: StepGroup[] = [];
  let i = 0;
  while (i < steps.length) {
    const step = steps[i];
    i += 1;
    if (step === undefined || step.status === 'running') continue;
    if (step.status === 'error') {
      const why = step.errorText === undefined ? '' : ` — ${escapeHtml(cutText(step.errorText, 100))}`;
      groups.push({ line: `✗ ${escapeHtml(step.label)}${why}`, count: 1 });
      continue;
    }
    if (step.status === 'abandoned') {
      groups.push({ line: `⏹ ${escapeHtml(step.label)}`, count: 1 });
      continue;
    }
    let count = 1;
    while (i < steps.length) {
      const next = steps[i];
      if (next === undefined || next.status === 'running') {
        i += 1;
        continue;
      }
      if (next.status !== 'ok' || next.name !== step.name) break;
      count += 1;
      i += 1;
    }
    const text = count === 1 ? step.label : toolGroupSummary(step.name, count);
    groups.push({ line: `✓ ${escapeHtml(text)}`, count });
  }
  return groups;
}

/**
 * Adds as many of the newest step groups as fit between the fixed parts, with a line counting the
 * steps left out. Returns undefined when even the fixed parts do not fit.
 */
function withSteps(
  state: CardState,
  groups: readonly StepGroup[],
  fixed: Fixed,
  max: number,
): string | undefined {
  const join = (lines: readonly string[]): string => lines.join('\n');
  const base = join([...fixed.top, ...fixed.bottom]);
  if (base.length > max) return undefined;
  const totalSteps = groups.reduce((n, g) => n + g.count, 0) + state.droppedSteps;
  if (totalSteps === 0) return base;
  // Room for the blank separator, the longest elision line, and the newline before each group.
  const elisionRoom = `\n\n… ${totalSteps} earlier steps`.length + 1;
  let room = max - base.length - elisionRoom;
  const shown: string[] = [];
  let shownSteps = 0;
  for (let i = groups.length - 1; i >= 0; i -= 1) {
    const group = groups[i];
    if (group === undefined || group.line.length + 1 > room) break;
    room -= group.line.length + 1;
    shown.unshift(group.line);
    shownSteps += group.count;
  }
  const elided = totalSteps - shownSteps;
  if (elided > 0) shown.unshift(`… ${elided} earlier step${elided === 1 ? '' : 's'}`);
  return join([...fixed.top, '', ...shown, ...(fixed.bottom.length > 0 ? ['', ...fixed.bottom] : [])]);
}
