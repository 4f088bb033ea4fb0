/**
 * Control requests, as part of the session machine: pure functions on {@link SessionState} (no I/O, no
 * clock), called by `Session`.
 *
 * This side sends `control_request`s for interrupt, model, permission mode and `initialize`, each under a
 * request id `sy-<generation>-<n>` that never repeats across processes, and remembers which gateway command
 * each answers. The CLI's `control_response` settles it: a `command_result` for the command, and the new
 * model or mode once the CLI accepted it. A request the process never answered fails its command when the
 * process exits. Requests the CLI sends that nothing here handles are refused at once, so the CLI does
 * not wait for ever.
 */
import { safeSlice } from '@switchyard/card';
import type { AppFrame } from '@switchyard/protocol/common';
import type { CliEvent } from '../translate/translator.js';
import type { PendingControl, SessionState } from './state.js';

/**
 * Records a control request and returns the line to write and the request id the CLI will answer under.
 * An interrupt marks the running turn, so its end is reported as interrupted.
 */
export function requestControl(
  s: SessionState,
  kind: PendingControl['kind'],
  commandId: string | undefined,
  value?: string,
): { line: string; requestId: string } {
  s.controlCounter += 1;
  const requestId = `sy-${s.generation}-${s.controlCounter}`;
  s.controls[requestId] = {
    kind,
    ...(commandId !== undefined ? { commandId } : {}),
    ...(value !== undefined ? { value } : {}),
  };
  if (kind === 'interrupt' && s.turn) s.turn.interruptRequested = true;
  const request =
    kind === 'interrupt'
      ? { subtype: 'interrupt' }
      : kind === 'set_model'
        ? { subtype: 'set_model', model: value }
        : kind === 'set_mode'
          ? { subtype: 'set_permission_mode', mode: value }
          : { subtype: 'initialize' };
  return { line: JSON.stringify({ type: 'control_request', request_id: requestId, request }), requestId };
}

/**
 * The CLI answered a control request of ours: forgets it, applies an accepted model or mode, and returns
 * the request with the `command_result` frames for its command. `undefined` if it is not ours (or was
 * answered already). An `initialize` gets no frames here: its answer is for prompt recovery.
 */
export function controlAnswered(
  s: SessionState,
  event: Extract<CliEvent, { kind: 'control_response' }>,
): { control: PendingControl; frames: AppFrame[] } | undefined {
  const control = s.controls[event.requestId];
  if (!control) return undefined;
  delete s.controls[event.requestId];
  if (control.kind === 'initialize') return { control, frames: [] };
  if (event.ok && control.kind === 'set_model' && control.value !== undefined) s.model = control.value;
  if (event.ok && control.kind === 'set_mode' && control.value !== undefined) s.mode = control.value;
  const frames: AppFrame[] = [];
  if (control.commandId !== undefined) {
    frames.push({
      type: 'command_result',
      commandId: control.commandId,
      ok: event.ok,
      ...(event.ok ? {} : { message: safeSlice(event.error ?? 'the CLI refused the request', 0, 4000) }),
    });
  }
  return { control, frames };
}

/** The process is gone: every command still waiting for its answer fails; all requests are forgotten. */
export function failPendingControls(s: SessionState): AppFrame[] {
  const frames: AppFrame[] = [];
  for (const control of Object.values(s.controls)) {
    if (control.commandId !== undefined) {
      frames.push({
        type: 'command_result',
        commandId: control.commandId,
        ok: false,
        message: 'the Claude process exited',
      });
    }
  }
  s.controls = {};
  return frames;
}

/** The answer refusing a control request the CLI sent that nothing here can handle. */
export function refuseControlRequest(event: Extract<CliEvent, { kind: 'control_request_other' }>): string {
  return JSON.stringify({
    type: 'control_response',
    response: {
      subtype: 'error',
      request_id: event.requestId,
      error: `unsupported control request: ${event.subtype}`,
    },
  });
}
