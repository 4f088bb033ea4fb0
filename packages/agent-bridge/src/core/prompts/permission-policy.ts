/**
 * The operator's limits on what a conversation may be allowed, applied where the bridge meets the CLI:
 * which permission modes a conversation may run in (`allowedModes`), and how far an "always allow" a
 * user presses reaches (`alwaysAllowScope`). Pure.
 *
 * - A mode outside `allowedModes` is never passed to `--permission-mode` (a mode stored from before the
 *   list changed falls back to the configured one), never set by a `set_mode` frame, and never offered
 *   as a prompt's "switch mode" suggestion.
 * - With `alwaysAllowScope: session` (the default) every suggestion the CLI would write to a settings
 *   file (`localSettings`, `projectSettings`, `userSettings`) is kept to the conversation's own session:
 *   one person's press must not widen what Claude may do in other people's conversations. With
 *   `project` a rule lands in the working directory's `settings.local.json` (`localSettings`): never in
 *   the user's own (which every agent of that user reads), nor in the project's `settings.json`, which a
 *   webhook's or schedule's own conversation still reads (it skips the local file: `--setting-sources`).
 */
import { DEFAULT_ALLOWED_MODES, type PermissionMode } from '@switchyard/protocol/common';

/** How far an "always allow" reaches: this conversation, or every conversation in its working directory. */
export type AlwaysAllowScope = 'session' | 'project';

/** The operator's limits; see the module comment. */
export interface PermissionPolicy {
  allowedModes: readonly PermissionMode[];
  alwaysAllowScope: AlwaysAllowScope;
}

/** Every mode but `bypassPermissions`; rules stay in the conversation. */
export const DEFAULT_PERMISSION_POLICY: PermissionPolicy = {
  allowedModes: DEFAULT_ALLOWED_MODES,
  alwaysAllowScope: 'session',
};

/** Whether a conversation may be in `mode`. */
export function modeAllowed(policy: PermissionPolicy, mode: string): boolean {
  return (policy.allowedModes as readonly string[]).includes(mode);
}

/** What a refused mode change is answered with. */
export function refusedModeText(mode: string, policy: PermissionPolicy): string {
  return `Mode ${mode} is not allowed for this agent. Allowed modes: ${policy.allowedModes.join(', ')}.`;
}

/**
 * The `--permission-mode` a process starts with: the one `/mode` last set in the conversation if it is
 * still allowed, else the configured one if allowed, else none (the CLI's default).
 */
export function startMode(
  policy: PermissionPolicy,
  stored: string | undefined,
  configured: string | undefined,
): string | undefined {
  if (stored !== undefined && modeAllowed(policy, stored)) return stored;
  return configured !== undefined && modeAllowed(policy, configured) ? configured : undefined;
}

const SETTINGS_FILES = new Set(['localSettings', 'projectSettings', 'userSettings']);

/**
 * The CLI's suggestions as this policy lets them be offered and applied: a mode change to a mode not
 * allowed is left out, and each destination is narrowed to the scope. Idempotent, so it can be applied
 * again to what was stored.
 */
export function scopedSuggestions(policy: PermissionPolicy, suggestions: readonly unknown[]): unknown[] {
  return suggestions.flatMap((suggestion) => {
    if (typeof suggestion !== 'object' || suggestion === null) return [suggestion];
    const s = suggestion as Record<string, unknown>;
    if (s.type === 'setMode' && !modeAllowed(policy, String(s.mode))) return [];
    const destination = typeof s.destination === 'string' ? s.destination : undefined;
    if (destination === undefined || !SETTINGS_FILES.has(destination)) return [suggestion];
    const narrowed = policy.alwaysAllowScope === 'session' ? 'session' : 'localSettings';
    return [narrowed === destination ? suggestion : { ...s, destination: narrowed }];
  });
}
