import { describe, expect, it } from 'vitest';
import { parseConfig, validateConfig } from '../src/config.js';
import { ConfigError } from '../src/config-error.js';
import { editDistance, nearestKey } from '../src/config-messages.js';
import { configProblems } from './config-problems.js';

const env = { env: {}, cwd: '/srv' };
const FILE = '/etc/switchyard/switchyard.yaml';
const agent = (extra: string) => `agents:\n  - name: demo\n    allow: [1]\n    workDir: /w\n${extra}`;

/** Wording the validator uses on its own: none of it may reach the operator. */
const VALIDATOR_WORDS = /Invalid input|Too small|Too big|expected \w+, received|Unrecognized key|\(file\)/;

describe('config messages say what is wrong, where, and what to do', () => {
  it('gives the line of the opening quote of a quote never closed, not the end of the file', () => {
    const found = configProblems('agents:\n  - name: demo\n    workDir: "/srv/work\n    allow: [1]\n\n\n');
    expect(found).toEqual([
      'line 3, column 14: the double quote opened here is never closed: end the value with " on the same line',
    ]);
    expect(configProblems("agents:\n  - name: 'demo\n    allow: [1]\n")[0]).toMatch(
      /^line 2, column 11: the single quote opened here is never closed/,
    );
    expect(configProblems('agents:\n  - name: demo\n    allow: [1\n    workDir: /w\n')).toEqual([
      'line 3, column 12: the [ opened here is never closed: end the list with ] (on one line, or with its items indented under the key)',
    ]);
  });

  it('suggests the key a near-miss was meant to be', () => {
    const found = configProblems(
      agent('    workdri: /x\n    maxLiveSesions: 3\n    claude: { modle: opus }\n'),
    );
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^agents\[0\]: unknown settings "workdri" \(did you mean workDir\?\), "maxLiveSesions" \(did you mean maxLiveSessions\?\): fix the spelling or remove it/,
        ),
        expect.stringMatching(/^agents\[0\]\.claude: unknown setting "modle" \(did you mean model\?\)/),
      ]),
    );
    // Nothing near: the settings that exist there are listed instead.
    expect(configProblems(agent('    colour: blue\n'))[0]).toMatch(
      /unknown setting "colour": .*the settings here are name, token/,
    );
  });

  it('keeps a config with only unknown keys usable for the checks of what it points at', () => {
    const { config, problems: found } = validateConfig(agent('    wrkDir: /x\n'), FILE, env);
    expect(found).toEqual([expect.stringContaining('did you mean workDir?')]);
    expect(config?.agents[0]?.workDir).toBe('/w');
    // It is still refused for starting.
    expect(() => parseConfig(agent('    wrkDir: /x\n'), FILE, env)).toThrow(ConfigError);
  });

  it('says wrong types in words, with the value found and how to write it', () => {
    const found = configProblems(
      'agents:\n  - name: demo\n    allow: [1]\n    workDir: 5\n    replies: fancy\n    claude: { restartOnExit: "yes" }\n    card: { showDelayMs: -5 }\n    metrics: { port: 0 }\n',
    );
    expect(found).toEqual(
      expect.arrayContaining([
        'agents[0].workDir: must be text, but it is the number 5; to mean the text, quote it: "5"',
        'agents[0].replies: must be one of "rich", "classic", but it is the text "fancy"',
        'agents[0].claude.restartOnExit: must be true or false, but it is the text "yes"',
        'agents[0].card.showDelayMs: must be at least 0, but it is the number -5: change the number',
        'agents[0].metrics.port: must be at least 1, but it is the number 0: change the number',
      ]),
    );
    for (const problem of found) expect(problem).not.toMatch(VALIDATOR_WORDS);
  });

  it('explains an empty file and a missing required setting', () => {
    for (const text of ['', 'null\n', '# nothing yet\n']) {
      expect(configProblems(text)).toEqual([
        'the file is empty: it should hold "agents:" with at least one agent (see deploy/switchyard.example.yaml)',
      ]);
    }
    expect(configProblems('agents:\n  - name: demo\n    allow: [1]\n')).toEqual([
      'agents[0].workDir: is missing: add it, as text',
    ]);
    expect(configProblems('agent:\n  - name: demo\n')).toEqual(
      expect.arrayContaining([expect.stringContaining('unknown setting "agent" (did you mean agents?)')]),
    );
  });

  it('measures edit distance with transpositions as one edit', () => {
    expect(editDistance('workdri', 'workDir')).toBe(2);
    expect(editDistance('wrokDir', 'workDir')).toBe(1);
    expect(nearestKey('workdir', ['name', 'workDir'])).toBe('workDir');
    expect(nearestKey('colour', ['name', 'workDir'])).toBeUndefined();
  });
});
