/**
 * The one error of the config: a file that cannot be used, with every problem found in it, each a sentence
 * naming its path and the fix. Loading, validation and the token's sources all throw it.
 */
/** A problem with the config the operator must fix; the message lists every one found. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file} is not a valid Switchyard config:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}
