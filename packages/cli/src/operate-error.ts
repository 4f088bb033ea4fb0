/**
 * The failure of an operator command that cannot be done here (no units, no state, services running):
 * its message says what to do instead. Its own module so that `main` can recognise it without loading
 * the commands that throw it.
 */

/** An operator action that cannot be done here; the message says what to do instead. */
export class OperateError extends Error {
  override readonly name = 'OperateError';
}
