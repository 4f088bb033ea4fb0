import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readToken } from '../src/bot-token.js';
import { formatPath, loadConfig, parseConfig, resolveConfigPath } from '../src/config.js';
import { ConfigError } from '../src/config-error.js';
import { describeConfig } from '../src/masked-config.js';

const env = { env: {}, cwd: '/srv' };
const TOKEN = '123456:AAH-abcdefghijklmnopqrstuvwxyz';

function problems(text: string, environment = env): string[] {
  try {
    parseConfig(text, '/etc/switchyard/switchyard.yaml', environment);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('config was accepted');
}

describe('config', () => {
  it('applies defaults and resolves paths against the config file', () => {
    const config = parseConfig(
      `agents:\n  - name: demo\n    token: "${TOKEN}"\n    allow: [1001]\n    workDir: ./work\n`,
      '/etc/switchyard/switchyard.yaml',
      env,
    );
    const agent = config.agents[0];
    expect(agent).toMatchObject({
      name: 'demo',
      apiRoot: 'https://api.telegram.org',
      allow: [1001],
      allowChats: [],
      workDir: '/etc/switchyard/work',
      stateDir: '/etc/switchyard/.switchyard/demo/state',
      socketPath: '/etc/switchyard/.switchyard/demo/run/bridge.sock',
      claude: { bin: 'claude', restartOnExit: true, args: [], env: {} },
      retention: { days: 7 },
    });
    const kept = parseConfig(
      `agents:\n  - name: demo\n    allow: [1]\n    workDir: /w\n    retention: { days: 30 }\n`,
      '/etc/s.yaml',
      env,
    );
    expect(kept.agents[0]?.retention).toEqual({ days: 30 });
    expect(
      problems(`agents:\n  - name: demo\n    allow: [1]\n    workDir: /w\n    retention: { days: 0 }\n`),
    ).toEqual([expect.stringContaining('retention.days')]);
  });

  it('allows every mode but bypassPermissions unless allowedModes lists it, and keeps "always allow" to the session', () => {
    const yaml = (extra: string) => `agents:\n  - name: demo\n    allow: [1]\n    workDir: /w\n${extra}`;
    expect(parseConfig(yaml(''), '/etc/s.yaml', env).agents[0]).toMatchObject({
      allowedModes: ['default', 'acceptEdits', 'plan'],
      alwaysAllowScope: 'session',
    });
    expect(problems(yaml('    claude: { permissionMode: bypassPermissions }\n'))).toEqual([
      'agents[0].claude.permissionMode: bypassPermissions is not in allowedModes (default, acceptEdits, plan); add it there to allow it',
    ]);
    expect(
      problems(yaml('    allowedModes: [default]\n    chats: [{ chat: 5, permissionMode: plan }]\n')),
    ).toEqual([
      'agents[0].chats[0].permissionMode: plan is not in allowedModes (default); add it there to allow it',
    ]);
    const chosen = parseConfig(
      yaml(
        '    allowedModes: [default, bypassPermissions]\n    alwaysAllowScope: project\n    claude: { permissionMode: bypassPermissions }\n',
      ),
      '/etc/s.yaml',
      env,
    ).agents[0];
    expect(chosen).toMatchObject({
      allowedModes: ['default', 'bypassPermissions'],
      alwaysAllowScope: 'project',
      claude: { permissionMode: 'bypassPermissions' },
    });
    expect(problems(yaml('    allowedModes: []\n'))).toEqual([expect.stringContaining('allowedModes')]);
  });

  it('replies are rich unless set to classic; anything else is refused', () => {
    const yaml = (extra: string) => `agents:\n  - name: demo\n    allow: [1]\n    workDir: /w\n${extra}`;
    expect(parseConfig(yaml(''), '/etc/s.yaml', env).agents[0]?.replies).toBe('rich');
    expect(parseConfig(yaml('    replies: classic\n'), '/etc/s.yaml', env).agents[0]?.replies).toBe(
      'classic',
    );
    expect(problems(yaml('    replies: fancy\n')).join('\n')).toMatch(/replies/);
  });

  it("uses systemd's state and runtime directories when they are set", () => {
    const config = parseConfig(`agents:\n  - name: demo\n    allow: [1]\n    workDir: /w\n`, '/etc/s.yaml', {
      env: { STATE_DIRECTORY: '/var/lib/switchyard/demo', RUNTIME_DIRECTORY: '/run/switchyard/demo' },
      cwd: '/',
    });
    expect(config.agents[0]?.stateDir).toBe('/var/lib/switchyard/demo');
    expect(config.agents[0]?.socketPath).toBe('/run/switchyard/demo/bridge.sock');
  });

  it('finds the same agent state directory from either unit, whose own state is one level down', () => {
    const stateOf = (dir: string) =>
      parseConfig(`agents:\n  - name: demo\n    allow: [1]\n    workDir: /w\n`, '/etc/s.yaml', {
        env: { STATE_DIRECTORY: dir },
        cwd: '/',
      }).agents[0]?.stateDir;
    expect(stateOf('/var/lib/switchyard/demo/gateway')).toBe('/var/lib/switchyard/demo');
    expect(stateOf('/var/lib/switchyard/demo/bridge')).toBe('/var/lib/switchyard/demo');
  });

  it('lists every problem by its path', () => {
    const found = problems(`agents:
  - name: Demo Agent
    token: nope
    allow: [1, 2, "three"]
    workDir: /w
    claude: { permissionMode: yolo }
    colour: blue
`);
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^agents\[0\]\.name: expected an agent name/),
        expect.stringMatching(/^agents\[0\]\.token: /),
        'agents[0].allow[2]: expected a Telegram user id (integer)',
        expect.stringMatching(/^agents\[0\]\.claude\.permissionMode: /),
        expect.stringMatching(/^agents\[0\]: .*colour/),
      ]),
    );
    expect(found.length).toBeGreaterThanOrEqual(5);
  });

  it('reports a duplicate agent name together with every other mistake, not after they are fixed', () => {
    expect(
      problems(
        `agents:\n  - { name: a, allow: [1], workDir: 5 }\n  - { name: a, allow: [x], workDir: /w }\n`,
      ),
    ).toEqual(
      expect.arrayContaining([
        'agents[1].name: "a" is used by another agent',
        expect.stringMatching(/^agents\[0\]\.workDir: /),
        expect.stringMatching(/^agents\[1\]\.allow\[0\]: /),
      ]),
    );
  });

  it('refuses duplicate agent names, a missing allowlist and YAML syntax errors', () => {
    expect(
      problems(
        `agents:\n  - { name: a, allow: [1], workDir: /w }\n  - { name: a, allow: [1], workDir: /w }\n`,
      ),
    ).toEqual(['agents[1].name: "a" is used by another agent']);
    expect(problems(`agents:\n  - { name: a, allow: [], workDir: /w }\n`)[0]).toMatch(
      /^agents\[0\]\.allow: list at least one/,
    );
    expect(problems(`agents: [\n`)[0]).toMatch(/^line \d+, column \d+: /);
  });

  it('takes operators from the allowlist only, and refuses one who is not allowed', () => {
    const config = parseConfig(
      `agents:\n  - { name: a, allow: [1, 2], operators: [2], workDir: /w }\n`,
      '/etc/switchyard/switchyard.yaml',
      env,
    );
    expect(config.agents[0]?.operators).toEqual([2]);
    expect(problems(`agents:\n  - { name: a, allow: [1], operators: [3], workDir: /w }\n`)).toEqual([
      'agents[0].operators[0]: user 3 is not in allow; an operator must be allowed',
    ]);
  });

  it('refuses a socket path over the Unix limit, naming the setting to change', () => {
    const deep = `/${'d'.repeat(110)}`;
    expect(problems(`agents:\n  - { name: a, allow: [1], workDir: /w, runtimeDir: "${deep}" }\n`)[0]).toMatch(
      /^agents\[0\]\.runtimeDir: the socket path .* over the 107-byte limit/,
    );
  });

  it('moves the default socket of a config in a deep directory to a short private place', () => {
    const deepFile = path.join('/home', 'someone', 'a-long-checkout-path/'.repeat(5), 'switchyard.yaml');
    const config = parseConfig(`agents:\n  - { name: demo, allow: [1], workDir: /w }\n`, deepFile, {
      env: {},
      cwd: '/',
    });
    const socketPath = config.agents[0]?.socketPath ?? '';
    expect(Buffer.byteLength(socketPath)).toBeLessThanOrEqual(107);
    expect(socketPath).toMatch(/^\/tmp\/switchyard-\d+\/[0-9a-f]{20}\/bridge\.sock$/);
  });

  it('finds the file by flag, then $SWITCHYARD_CONFIG, then ./switchyard.yaml', () => {
    expect(resolveConfigPath('x.yaml', { env: { SWITCHYARD_CONFIG: '/e.yaml' }, cwd: '/c' })).toBe(
      '/c/x.yaml',
    );
    expect(resolveConfigPath(undefined, { env: { SWITCHYARD_CONFIG: '/e.yaml' }, cwd: '/c' })).toBe(
      '/e.yaml',
    );
    expect(resolveConfigPath(undefined, { env: {}, cwd: '/c' })).toBe('/c/switchyard.yaml');
    expect(resolveConfigPath(undefined, { env: { SWITCHYARD_CONFIG: '' }, cwd: '/c' })).toBe(
      '/c/switchyard.yaml',
    );
  });

  it('says how to start when the file does not exist', () => {
    expect(() => loadConfig('/nonexistent/switchyard.yaml', env)).toThrow(
      /no such file: copy deploy\/switchyard.example.yaml/,
    );
    expect(() => loadConfig(tmpdir(), env)).toThrow(/is a directory: pass the config file itself/);
  });

  it('reads the token from a file or the environment, and never prints it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-cfg-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(path.join(dir, 'token'), `${TOKEN}\n`);
    const text = `agents:
  - { name: a, allow: [1], workDir: /w, token: { file: token } }
  - { name: b, allow: [1], workDir: /w, token: { env: BOT_TOKEN } }
  - { name: c, allow: [1], workDir: /w, token: "${TOKEN}", claude: { env: { ANTHROPIC_API_KEY: sk-secret, ANTHROPIC_BASE_URL: "http://127.0.0.1:9" } } }
`;
    const environment = { env: { BOT_TOKEN: TOKEN }, cwd: dir };
    const config = parseConfig(text, path.join(dir, 'switchyard.yaml'), environment);
    for (const agent of config.agents) expect(readToken(agent, environment, config.file)).toBe(TOKEN);
    const shown = describeConfig(config);
    expect(shown).not.toContain(TOKEN.split(':')[1]);
    expect(shown).not.toContain('sk-secret');
    expect(shown).toContain('http://127.0.0.1:9');
    expect(() => readToken(config.agents[1] as never, { env: {}, cwd: dir }, config.file)).toThrow(
      /environment variable BOT_TOKEN is empty or missing/,
    );
  });

  it('formats paths the way people read them', () => {
    expect(formatPath(['agents', 0, 'allow', 2])).toBe('agents[0].allow[2]');
    expect(formatPath([])).toBe('(file)');
  });
});
