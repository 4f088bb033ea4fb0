/**
 * `/settings`: the panel of a conversation's settings (`core/settings/settings.ts` draws it) sent as a
 * message with buttons, and the presses on them. A press on replies or the card stores the conversation's new
 * setting (SQLite, before the press is answered); a press on a model or a mode runs `/model` or `/mode`
 * for the conversation, so the bridge changes it exactly as the typed command would. Either way the
 * panel is redrawn with the new choice marked.
 *
 * Who may press: the allowlist refuses strangers before any press reaches here; a token is honoured
 * only in the conversation whose panel carried it (`settings-buttons.ts`).
 */
import {
  type Clock,
  DEFAULT_ALLOWED_MODES,
  type Logger,
  type PermissionMode,
  type Route,
} from '@switchyard/protocol';
import type { InlineButton } from '../../core/commands/command-texts.js';
import { threadParams } from '../../core/intake/route.js';
import { applyChoice, choiceText, type SettingsChoice, settingsView } from '../../core/settings/settings.js';
import type { GatewayStatus } from '../../options.js';
import type { CommandRunner } from '../commands/commands.js';
import { type BotApi, errorText, isNotModified } from '../telegram/bot-api.js';
import type { Courier } from '../telegram/courier.js';
import type { ConversationSettingsService } from './conversation-settings.js';
import { createSettingsButtons, SETTINGS_BUTTON_EXPIRED } from './settings-buttons.js';

/** What the panel needs. */
export interface SettingsPanelOptions {
  settings: ConversationSettingsService;
  /** Models `/model` accepts; empty: any. */
  models: readonly string[];
  /** Modes `/mode` may switch to (the operator's `allowedModes`; default all but bypassPermissions). */
  modes?: readonly PermissionMode[] | undefined;
  /** The bridge's last word on the conversation's model and mode. */
  status(route: Route): Pick<GatewayStatus, 'model' | 'mode'>;
  api: Pick<BotApi, 'sendMessage' | 'editMessageText'>;
  courier: Courier;
  logger: Logger;
  clock: Clock;
}

/** The `/settings` command and its buttons. */
export interface SettingsPanel {
  /** Sends the panel of `route`'s settings to `route`. */
  show(route: Route): void;
  /**
   * A press on a panel button (callback data starting with `st:`) in conversation `route`, on panel
   * message `messageId`, by user `from`; resolves with the text to answer the press with. A press on a
   * model or a mode runs `/model` or `/mode` through `commands`, the runner the caller holds (the runner
   * shows this panel for `/settings`, so the panel is built before it and takes it here).
   */
  press(
    data: string,
    route: Route,
    press: { from?: number | undefined; messageId?: number | undefined },
    commit: (() => void) | undefined,
    commands: Pick<CommandRunner, 'run'>,
  ): Promise<string>;
}

/** Creates the panel. */
export function createSettingsPanel(options: SettingsPanelOptions): SettingsPanel {
  const { settings, courier, api, logger } = options;
  const buttons = createSettingsButtons(() => options.clock.now());
  const limits = { models: options.models, modes: options.modes ?? DEFAULT_ALLOWED_MODES };

  /** The panel of `route`, with `chosen` (a model or mode just asked for) shown as current. */
  const view = (route: Route, chosen?: SettingsChoice): { text: string; buttons: InlineButton[][] } => {
    const status = options.status(route);
    const current = {
      ...settings.get(route),
      model: chosen?.kind === 'model' ? chosen.value : status.model,
      mode: chosen?.kind === 'mode' ? chosen.value : status.mode,
    };
    return settingsView(current, limits, (choice) => buttons.issue(choice, route));
  };

  const markup = (rows: InlineButton[][]) => ({ reply_markup: { inline_keyboard: rows } });

  return {
    show(route) {
      const panel = view(route);
      void courier
        .call(route.chatId, () =>
          api.sendMessage(route.chatId, panel.text, { ...threadParams(route), ...markup(panel.buttons) }),
        )
        .catch((error: unknown) => logger.warn({ event: 'settings_failed', error: errorText(error) }));
    },

    async press(data, route, press, commit, commands) {
      const choice = buttons.resolve(data, route);
      if (!choice) return SETTINGS_BUTTON_EXPIRED;
      const next = applyChoice(settings.stored(route), choice);
      if (next) settings.set(route, next);
      else if (choice.kind === 'model')
        await commands.run({ name: 'model', model: choice.value }, route, press.from, commit);
      else if (choice.kind === 'mode')
        await commands.run({ name: 'mode', mode: choice.value }, route, press.from, commit);
      logger.info({ event: 'settings_changed', chat: route.chatId, setting: choice.kind });
      const messageId = press.messageId;
      if (messageId !== undefined) {
        const panel = view(route, choice);
        void courier
          .call(route.chatId, () =>
            api.editMessageText(route.chatId, messageId, panel.text, markup(panel.buttons)),
          )
          .catch((error: unknown) => {
            if (!isNotModified(error))
              logger.warn({ event: 'settings_redraw_failed', error: errorText(error) });
          });
      }
      return choiceText(choice);
    },
  };
}
