import { describe, expect, it } from 'vitest';
import {
  applyChoice,
  choiceText,
  effectiveSettings,
  type SettingsChoice,
  settingsLine,
  settingsView,
} from '../../src/core/settings/settings.js';

const DEFAULTS = { replies: 'rich', card: true } as const;

describe('conversation settings', () => {
  it.each([
    ['nothing stored: the agent’s defaults', {}, { replies: 'rich', card: true }],
    ['classic stored', { replies: 'classic' }, { replies: 'classic', card: true }],
    ['card off stored', { card: false }, { replies: 'rich', card: false }],
    ['both stored', { replies: 'classic', card: false }, { replies: 'classic', card: false }],
  ] as const)('%s', (_name, stored, effective) => {
    expect(effectiveSettings(stored, DEFAULTS)).toEqual(effective);
  });

  it.each([
    ['replies → classic', {}, { kind: 'replies', value: 'classic' }, { replies: 'classic' }],
    [
      'card → off keeps replies',
      { replies: 'classic' },
      { kind: 'card', value: false },
      { replies: 'classic', card: false },
    ],
    ['a model is the bridge’s, not stored', { card: true }, { kind: 'model', value: 'haiku' }, undefined],
    ['a mode is the bridge’s, not stored', {}, { kind: 'mode', value: 'plan' }, undefined],
  ] as const)('a press on %s', (_name, stored, choice, next) => {
    expect(applyChoice(stored, choice as SettingsChoice)).toEqual(next);
  });

  it.each([
    [{ kind: 'replies', value: 'classic' }, 'Replies: classic'],
    [{ kind: 'card', value: false }, 'Progress card: off'],
    [{ kind: 'card', value: true }, 'Progress card: on'],
    [{ kind: 'model', value: 'opus' }, 'Model: opus'],
    [{ kind: 'mode', value: 'acceptEdits' }, 'Mode: acceptEdits'],
  ] as const)('answers a press on %o with "%s"', (choice, text) => {
    expect(choiceText(choice as SettingsChoice)).toBe(text);
  });

  it('the /status line', () => {
    expect(settingsLine({ replies: 'classic', card: false })).toBe(
      'Settings: replies classic · progress card off (/settings)',
    );
  });

  it('the panel: every allowed choice a button, the current ones marked, nothing the operator forbids', () => {
    const issued: SettingsChoice[] = [];
    const view = settingsView(
      { replies: 'classic', card: true, model: 'sonnet', mode: 'default' },
      { models: ['opus', 'sonnet', 'haiku', 'opus-4'], modes: ['default', 'plan'] },
      (choice) => `st:${issued.push(choice)}`,
    );
    const labels = view.buttons.map((row) => row.map((b) => b.text));
    expect(labels).toEqual([
      ['Rich replies', '✓ Classic replies'],
      ['✓ Card on', 'Card off'],
      ['opus', '✓ sonnet', 'haiku'],
      ['opus-4'],
      ['✓ default', 'plan'],
    ]);
    expect(issued.some((c) => c.kind === 'mode' && c.value === 'bypassPermissions')).toBe(false);
    expect(view.buttons.flat().every((b) => /^st:\d+$/.test(b.callback_data))).toBe(true);
    expect(view.text).toContain('Replies: classic');
    expect(view.text).toContain('unsupported message');
    expect(view.text).toContain('Model: sonnet');
  });

  it('the panel with any model allowed offers no model buttons and says how to choose one', () => {
    const view = settingsView(
      { replies: 'rich', card: false },
      { models: [], modes: ['default'] },
      () => 'st:x',
    );
    expect(view.buttons).toHaveLength(3);
    expect(view.text).toContain('Model: unknown (any name: /model NAME)');
    expect(view.text).toContain('Progress card: off');
  });
});
