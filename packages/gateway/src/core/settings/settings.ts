/**
 * A conversation's settings, pure: what `/settings` shows and offers, what a press on one of its buttons
 * asks for, and the one line `/status` shows. Two settings are the gateway's own, kept per conversation
 * in SQLite (`store/conversation-settings.ts`) and read where they act:
 * - `replies`: `rich` (drafts and rich messages) or `classic` (a placeholder message edited into an
 *   HTML answer) — read where a reply's mode is decided (`io/reply/replies.ts`);
 * - `card`: whether long turns get the progress card — read where the card driver would open one.
 * The model and the permission mode are the bridge's (`/model`, `/mode`): the panel offers the
 * operator's choices and a press runs those commands.
 */
import type { PermissionMode } from '@switchyard/protocol/common';
import type { InlineButton } from '../commands/inline-button.js';

/** How replies look: `rich` or `classic` (for clients that show rich messages as "unsupported"). */
export type RepliesSetting = 'rich' | 'classic';

/** The settings a conversation keeps in the gateway; absent fields take the agent's defaults. */
export interface StoredSettings {
  replies?: RepliesSetting | undefined;
  card?: boolean | undefined;
}

/** A conversation's settings as they apply now. */
export interface ConversationSettings {
  replies: RepliesSetting;
  card: boolean;
  /** The model and mode the bridge last reported for the conversation, if it did. */
  model?: string | undefined;
  mode?: string | undefined;
}

/** One change a button asks for. */
export type SettingsChoice =
  | { kind: 'replies'; value: RepliesSetting }
  | { kind: 'card'; value: boolean }
  | { kind: 'model'; value: string }
  | { kind: 'mode'; value: PermissionMode };

/** What the operator lets a conversation choose from. */
export interface SettingsOptions {
  /** Models `/model` accepts; empty: any name (no buttons: `/model NAME`). */
  models: readonly string[];
  /** Modes `/mode` may switch to (the operator's `allowedModes`). */
  modes: readonly PermissionMode[];
}

/** The settings that apply: the stored ones over the agent's defaults. */
export function effectiveSettings(
  stored: StoredSettings,
  defaults: { replies: RepliesSetting; card: boolean },
): Pick<ConversationSettings, 'replies' | 'card'> {
  return { replies: stored.replies ?? defaults.replies, card: stored.card ?? defaults.card };
}

/** The stored settings after `choice`; `undefined` for a choice the gateway does not keep (model, mode). */
export function applyChoice(stored: StoredSettings, choice: SettingsChoice): StoredSettings | undefined {
  switch (choice.kind) {
    case 'replies':
      return { ...stored, replies: choice.value };
    case 'card':
      return { ...stored, card: choice.value };
    default:
      return undefined;
  }
}

/** How a press is answered (the toast): what it changed. */
export function choiceText(choice: SettingsChoice): string {
  switch (choice.kind) {
    case 'replies':
      return `Replies: ${choice.value}`;
    case 'card':
      return `Progress card: ${choice.value ? 'on' : 'off'}`;
    case 'model':
      return `Model: ${choice.value}`;
    case 'mode':
      return `Mode: ${choice.value}`;
  }
}

/** `/status`'s line for the gateway's settings. */
export function settingsLine(s: Pick<ConversationSettings, 'replies' | 'card'>): string {
  return `Settings: replies ${s.replies} · progress card ${s.card ? 'on' : 'off'} (/settings)`;
}

/** Buttons per row for the model and mode choices. */
const PER_ROW = 3;

const mark = (chosen: boolean, label: string): string => (chosen ? `✓ ${label}` : label);

const rows = <T>(items: readonly T[]): T[][] =>
  Array.from({ length: Math.ceil(items.length / PER_ROW) }, (_, i) =>
    items.slice(i * PER_ROW, (i + 1) * PER_ROW),
  );

/**
 * The `/settings` panel: the current values with what each does, and a button for every choice (the
 * current one marked ✓) whose callback data `button` makes (a server-side token).
 */
export function settingsView(
  current: ConversationSettings,
  options: SettingsOptions,
  button: (choice: SettingsChoice) => string,
): { text: string; buttons: InlineButton[][] } {
  const b = (choice: SettingsChoice, label: string, chosen: boolean): InlineButton => ({
    text: mark(chosen, label),
    callback_data: button(choice),
  });
  const buttons: InlineButton[][] = [
    [
      b({ kind: 'replies', value: 'rich' }, 'Rich replies', current.replies === 'rich'),
      b({ kind: 'replies', value: 'classic' }, 'Classic replies', current.replies === 'classic'),
    ],
    [
      b({ kind: 'card', value: true }, 'Card on', current.card),
      b({ kind: 'card', value: false }, 'Card off', !current.card),
    ],
    ...rows(options.models).map((row) =>
      row.map((model) => b({ kind: 'model', value: model }, model, current.model === model)),
    ),
    ...rows(options.modes).map((row) =>
      row.map((mode) => b({ kind: 'mode', value: mode }, mode, current.mode === mode)),
    ),
  ];
  const text = [
    'Settings of this conversation:',
    `• Replies: ${current.replies} — rich streams a draft and sends one formatted message; classic edits a plain message into the answer (choose it if your app shows "unsupported message").`,
    `• Progress card: ${current.card ? 'on' : 'off'} — a pinned card showing the tools of a long turn.`,
    `• Model: ${current.model ?? 'unknown'}${options.models.length === 0 ? ' (any name: /model NAME)' : ''}`,
    `• Mode: ${current.mode ?? 'unknown'} — how much the agent may do without asking.`,
  ].join('\n');
  return { text, buttons };
}
