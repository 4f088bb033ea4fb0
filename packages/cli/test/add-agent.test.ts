/**
 * `add-agent`'s config edit: a new agent is appended to `agents:` with the operator's comments and
 * entries kept as written, and an agent already there leaves the text byte for byte as it was (so
 * running add-agent again changes nothing).
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { withAgentEntry } from '../src/add-agent.js';

const entry = (name: string) => () => ({ name, allow: [42], workDir: `/srv/agents/${name}` });

describe('withAgentEntry', () => {
  it('appends a new agent and keeps the comments and the other agents', () => {
    const text = '# my host\nagents:\n  - name: old # the first bot\n    allow: [1]\n    workDir: /srv/old\n';
    const out = withAgentEntry(text, 'bot1', entry('bot1'));
    expect(out).toContain('# my host');
    expect(out).toContain('# the first bot');
    expect(parse(out).agents).toEqual([
      { name: 'old', allow: [1], workDir: '/srv/old' },
      { name: 'bot1', allow: [42], workDir: '/srv/agents/bot1' },
    ]);
  });

  it('leaves the text as it is when the agent is there, without asking for an entry', () => {
    const text = 'agents:\n  - { name: bot1, allow: [7], workDir: /w }  # mine\n';
    expect(withAgentEntry(text, 'bot1', () => expect.unreachable())).toBe(text);
  });

  it('starts a config from nothing', () => {
    expect(parse(withAgentEntry(undefined, 'bot1', entry('bot1')))).toEqual({
      agents: [{ name: 'bot1', allow: [42], workDir: '/srv/agents/bot1' }],
    });
  });
});
