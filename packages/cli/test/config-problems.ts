/**
 * The cli tests' one way to read what the config parser refuses: the problems of a config that must not
 * load, one sentence each. A config that loads is a failure of the test that expected problems.
 */
import type { ConfigEnvironment } from '../src/agent-config.js';
import { parseConfig } from '../src/config.js';
import { ConfigError } from '../src/config-error.js';

/** The environment the config tests parse in: none of the caller's variables, `/srv` as the cwd. */
export const TEST_ENV: ConfigEnvironment = { env: {}, cwd: '/srv' };

/** The config file the tests name. */
export const TEST_CONFIG_FILE = '/etc/switchyard/switchyard.yaml';

/** The problems `parseConfig` finds in `text`; throws when it accepts it. */
export function configProblems(
  text: string,
  file: string = TEST_CONFIG_FILE,
  env: ConfigEnvironment = TEST_ENV,
): string[] {
  try {
    parseConfig(text, file, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('config was accepted');
}
