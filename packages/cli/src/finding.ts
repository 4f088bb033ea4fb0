/**
 * The verdict every check of `config check` and `doctor` returns. Its own file because the checks live in
 * several (`config-check.ts`, `secret-exposure.ts`, `doctor.ts`) and each must name it without importing
 * the others.
 */

/** One verdict: `error` stops the agent from starting, `warn` is worth a look, `ok` is a passed check. */
export interface Finding {
  level: 'ok' | 'warn' | 'error';
  /** The config path the finding is about (`agents[0].workDir`), or the check's name for host facts. */
  path: string;
  message: string;
  /** What to do about it, when it is not `ok`. */
  fix?: string;
}
