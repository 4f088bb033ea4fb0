/**
 * The agent's `timezone`, `schedules:` and `scheduleGraceMinutes`: mapped onto the gateway's schedule
 * options, and each mistake (a bad pattern, zone, duplicate name) refused naming its key.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { ConfigError } from '../src/config-error.js';

const env = { env: {}, cwd: '/srv' };
const yaml = (extra: string) => `agents:\n  - name: demo\n    allow: [1]\n    workDir: /w\n${extra}`;
const schedule = (fields: string) =>
  `    schedules:\n      - { name: ci-digest, chat: -100123, prompt: "Summarize", ${fields} }\n`;

function problems(extra: string): string[] {
  try {
    parseConfig(yaml(extra), '/etc/switchyard/switchyard.yaml', env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('config was accepted');
}

describe('schedules in the config', () => {
  it('maps time zone, schedules and grace onto the gateway options', () => {
    const agent = parseConfig(
      yaml(
        `    timezone: Europe/Berlin\n    scheduleGraceMinutes: 5\n${schedule('cron: "0 9 * * 1-5", topic: 42, timezone: America/New_York')}`,
      ),
      '/etc/switchyard/switchyard.yaml',
      env,
    ).agents[0];
    expect(agent?.schedules).toEqual({
      timezone: 'Europe/Berlin',
      graceMs: 300_000,
      list: [
        {
          name: 'ci-digest',
          cron: '0 9 * * 1-5',
          chatId: -100123,
          threadId: 42,
          prompt: 'Summarize',
          timezone: 'America/New_York',
        },
      ],
    });
    expect(parseConfig(yaml(''), '/x.yaml', env).agents[0]?.schedules).toEqual({ list: [] });
  });

  it('a bad cron pattern is refused naming the key, with the forms it takes', () => {
    const [problem] = problems(schedule('cron: "0 9 * *"'));
    expect(problem).toMatch(/agents\[0\]\.schedules\[0\]\.cron/);
    expect(problem).toMatch(/five fields .* or six with seconds first/);
  });

  it('an unknown time zone is refused naming the key', () => {
    expect(problems(schedule('cron: "0 9 * * *", timezone: Mars/Base')).join('\n')).toMatch(
      /schedules\[0\]\.timezone.*unknown time zone "Mars\/Base"/,
    );
    expect(problems('    timezone: Nowhere\n').join('\n')).toMatch(/timezone.*unknown time zone/);
  });

  it('two schedules of one name are refused', () => {
    const twice =
      '    schedules:\n      - { name: a, cron: "* * * * *", chat: 1, prompt: p }\n      - { name: a, cron: "* * * * *", chat: 1, prompt: q }\n';
    expect(problems(twice).join('\n')).toMatch(/schedules\[1\]\.name.*"a" names two schedules/);
  });
});
