/**
 * What the commands say, pure: the `/status` text, the `/sessions` list with its buttons, the recent
 * exchanges `/status` shows, and dollars as the chat shows them. The shell (`commands.ts`) sends them.
 */
import { type FrameOf, type Route, readsUntrustedInput, type SessionInfo } from '@switchyard/protocol/common';
import { settingsLine } from '../settings/settings.js';
import { usageLimitStatus } from '../turns/usage-limit.js';
import type { InlineButton } from './inline-button.js';

/** What a `/sessions` button does to its conversation. */
export type SessionAction = 'stop' | 'reset';

/** What `/status` shows of the gateway (the gateway's `GatewayStatus` is one). */
export interface StatusFacts {
  bridgeConnected: boolean;
  agentState: string | undefined;
  model: string | undefined;
  mode: string | undefined;
  runningTurns: readonly { turnId: string }[];
  inbox: number;
  openPrompts: number;
  pins: number;
  lastError: string | undefined;
  polling: { ok: boolean; error?: string };
  /** The conversation's `/settings`, when `/status` is about one. */
  settings?: { replies: 'rich' | 'classic'; card: boolean } | undefined;
  /** When the conversation's usage limit resets, while its turn waits for it; and the agent's time zone. */
  usageLimitUntil?: number | undefined;
  timeZone?: string | undefined;
  /** Today's cost (the agent's time zone): this conversation's and the agent's, and the agent's budget. */
  costToday?: { conversationUsd: number | undefined; agentUsd: number; dailyUsd: number | undefined };
}

/** An inline button: its label and callback data. */
export type { InlineButton } from './inline-button.js';

/**
 * The `/status` text for one conversation: its state, model, mode, turn, queue and cost (from the
 * bridge's answer when there is one), then the agent's bridge, polling, last error, prompts and pins.
 */
export function statusText(
  s: StatusFacts,
  conversation?: FrameOf<'status'>,
  costUsd?: number,
  simulated = false,
): string {
  const turns = s.runningTurns.map((t) => t.turnId).join(', ') || 'none';
  const state = conversation?.state ?? s.agentState;
  const model = conversation?.model ?? s.model;
  const mode = conversation?.mode ?? s.mode;
  return [
    `Conversation: ${state === undefined ? 'unknown' : state === 'exited' ? 'no Claude process (resumes at your next message)' : state}`,
    ...(costUsd !== undefined
      ? [`Cost so far: ${formatUsd(costUsd)}${simulated ? ' (simulated: nothing was spent)' : ''}`]
      : []),
    ...(s.usageLimitUntil !== undefined ? [usageLimitStatus(s.usageLimitUntil, s.timeZone)] : []),
    ...(s.costToday ? [costTodayText(s.costToday, simulated)] : []),
    `Bridge: ${s.bridgeConnected ? 'connected' : 'disconnected (restarting?)'}`,
    `Model: ${model ?? 'unknown'}${simulated ? ' (simulated by the scripted model)' : ''} · Mode: ${mode ?? 'unknown'}`,
    ...(s.settings ? [settingsLine(s.settings)] : []),
    ...(conversation?.worktree
      ? [`Worktree: ${conversation.worktree.path} (branch ${conversation.worktree.branch})`]
      : []),
    `Current turn: ${turns}`,
    `Queue: ${s.inbox} message(s) waiting for the agent`,
    `Open prompts: ${s.openPrompts} · Pinned cards: ${s.pins}`,
    `Telegram polling: ${s.polling.ok ? 'ok' : `failing (${s.polling.error ?? 'unknown'})`}`,
    `Last error: ${s.lastError === undefined ? 'none' : cutError(s.lastError)}`,
  ].join('\n');
}

/** `/status`'s line of today's cost: this conversation's, the agent's, and the agent's daily budget. */
function costTodayText(c: NonNullable<StatusFacts['costToday']>, simulated: boolean): string {
  const here =
    c.conversationUsd === undefined ? '' : `${formatUsd(c.conversationUsd)} in this conversation · `;
  const budget = c.dailyUsd === undefined ? '' : ` of its ${formatUsd(c.dailyUsd)} daily budget`;
  return `Cost today: ${here}${formatUsd(c.agentUsd)} for the agent${budget}${simulated ? ' (simulated)' : ''}`;
}

/** How much of an error `/status` shows: a glance; the log has it whole. */
const ERROR_CHARS = 500;
const cutError = (text: string): string =>
  text.length > ERROR_CHARS ? `${Array.from(text.slice(0, ERROR_CHARS)).slice(0, -1).join('')}…` : text;

/** Dollars as the chat shows them. */
export function formatUsd(usd: number): string {
  return `$${usd.toFixed(usd < 1 ? 3 : 2)}`;
}

/** A conversation's label in `/sessions`: its name, or where it is. */
function sessionLabel(info: SessionInfo): string {
  if (info.name) return info.name;
  const where = info.route.chatId > 0 ? `private chat ${info.route.chatId}` : `chat ${info.route.chatId}`;
  const place = info.route.threadId === undefined ? where : `${where}, topic ${info.route.threadId}`;
  return info.route.lane === undefined ? place : `${place}, ${info.route.lane}`;
}

/**
 * The `/sessions` list: one line per conversation, most recently active first, with stop/reset buttons
 * whose callback data `button` makes (a server-side token).
 */
export function sessionsView(
  sessions: readonly SessionInfo[],
  button: (action: SessionAction, route: Route) => string,
  /** More buttons for a row (a worktree's removal, `terminal-texts.ts`). */
  extra: (info: SessionInfo, index: number) => InlineButton[] = () => [],
): { text: string; buttons: InlineButton[][] } {
  if (sessions.length === 0) return { text: 'No conversations yet.', buttons: [] };
  const sorted = [...sessions].sort((a, b) => (b.lastActiveAt ?? 0) - (a.lastActiveAt ?? 0)).slice(0, 20);
  const lines = sorted.map((info, index) => {
    const parts = [
      info.live ? `live, ${info.state}` : 'idle (no process)',
      ...(info.turnId ? ['turn running'] : []),
      ...(info.queued > 0 ? [`${info.queued} queued`] : []),
      ...(readsUntrustedInput(info.route) ? ['⚠ reads untrusted input'] : []),
      formatUsd(info.costUsd),
    ];
    return `${index + 1}. ${sessionLabel(info)} — ${parts.join(' · ')}`;
  });
  const buttons = sorted.map((info, index) => [
    { text: `⏹ Stop ${index + 1}`, callback_data: button('stop', info.route) },
    { text: `♻️ Reset ${index + 1}`, callback_data: button('reset', info.route) },
    ...extra(info, index),
  ]);
  const more = sessions.length > sorted.length ? [`…and ${sessions.length - sorted.length} more`] : [];
  return {
    text: [
      `${sessions.length} conversation(s):`,
      ...lines,
      ...more,
      '',
      'Stop ends a conversation’s Claude process (its next message resumes it); Reset starts it anew.',
    ].join('\n'),
    buttons,
  };
}

/** `HH:MM` of a time (ms since the epoch) in UTC, by arithmetic: a core reads no calendar. */
function utcClock(at: number): string {
  const minutes = Math.floor(at / 60_000);
  const two = (n: number): string => String(((n % 60) + 60) % 60).padStart(2, '0');
  return `${String(((Math.floor(minutes / 60) % 24) + 24) % 24).padStart(2, '0')}:${two(minutes)}`;
}

/** How many recent exchanges `/status` shows, and how much of each. */
const HISTORY_SHOWN = 6;
const HISTORY_CHARS = 160;

/**
 * The bridge's recent exchanges (from Claude's transcript) as plain lines, newest last; empty when it
 * sent none. Each is cut to one short line: `/status` is a glance, not the conversation. The agent's
 * text is Markdown, which the chat showed rendered: `plain` turns it into the text a user read there
 * (the shell passes the Markdown renderer's), so no `**` or `##` shows.
 */
export function historyText(
  history: FrameOf<'status'>['history'],
  plain: (markdown: string) => string = (text) => text,
): string {
  if (!history || history.length === 0) return '';
  const lines = history.slice(-HISTORY_SHOWN).map((entry) => {
    const who = entry.role === 'user' ? '👤' : '🤖';
    const time = utcClock(entry.at);
    const text = entry.role === 'user' ? entry.text : plain(entry.text);
    const flat = text.replace(/\s+/g, ' ').trim();
    const cut = flat.length > HISTORY_CHARS ? `${flat.slice(0, HISTORY_CHARS - 1)}…` : flat;
    return `${time} ${who} ${cut}`;
  });
  return ['Recently (UTC):', ...lines].join('\n');
}
