// @ts-check
/**
 * Re-records the agent-bridge fixtures: runs the pinned real `claude` CLI through scripted scenarios
 * against the sandbox's scripted model and saves, per scenario, into packages/agent-bridge/test/fixtures/:
 *
 *   <name>.stdin.jsonl            the lines written to the CLI's stdin
 *   <name>.stdout.jsonl           the CLI's stdout, verbatim
 *   <name>.transcript.jsonl       the session transcript ($CLAUDE_CONFIG_DIR/projects/<cwd>/<session>.jsonl);
 *                                 `<name>.transcript-2.jsonl` … for further sessions (after /clear)
 *   <name>.subagent-<n>.jsonl     sub-agent transcripts (<session>/subagents/agent-<id>.jsonl)
 *   <name>.requests.jsonl         what the fake API was asked, one summary a line
 *
 * Usage (from the repository root; builds the sandbox, and the bridge for the CLI's flags, first):
 *
 *   npx tsc -b packages/sandbox packages/agent-bridge && node packages/agent-bridge/scripts/record-fixtures.mjs [scenario …]
 *
 * Paths are fixed (/tmp/switchyard-fixtures/<scenario>/{work,config}) so re-recordings diff cleanly.
 */

import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  agent,
  ask,
  bash,
  createScriptedModel,
  overloaded,
  rateLimited,
  reply,
  rule,
  say,
  text,
  toolUse,
} from '../../sandbox/dist/index.js';
import { ClaudeSession } from './claude-session.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const FIXTURES = resolve(here, '../test/fixtures');
const ROOT = '/tmp/switchyard-fixtures';

/** @param {number} ms */
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * @typedef {import('./claude-session.mjs').ClaudeSession} Session
 * @typedef {{ name: string, about: string, script: any, env?: Record<string, string>, args?: string[],
 *             run: (s: Session, model: any) => Promise<void> }} Scenario
 */

/** @param {Session} s @param {any} request @param {'allow' | 'deny'} behavior */
function answer(s, request, behavior) {
  s.respond(
    request,
    behavior === 'allow'
      ? { behavior: 'allow', updatedInput: request.request.input }
      : { behavior: 'deny', message: 'The user said no.' },
  );
}

/** @type {Scenario[]} */
const scenarios = [
  {
    name: 'streamed-answer',
    about: 'one user text, a Markdown answer streamed in 16-character deltas',
    script: [
      rule(
        'hello',
        say('Hello! Here is **bold**, `code` and a list:\n\n- one\n- two\n', { chunkDelayMs: 20 }),
      ),
    ],
    async run(s) {
      s.say('hello there');
      await s.result();
    },
  },
  {
    name: 'permission-allowed',
    about: 'Bash asks for permission (can_use_tool), allowed with updatedInput echoed; the file is written',
    script: [rule('write', bash('echo hi > out.txt', 'Write a file'), say('Wrote out.txt.'))],
    async run(s) {
      s.say('please write a file');
      answer(s, await s.controlRequest('can_use_tool'), 'allow');
      await s.result();
    },
  },
  {
    name: 'permission-denied',
    about: 'Bash asks for permission, denied with a message; the tool_result is an error',
    script: [
      rule('write', bash('echo hi > out.txt', 'Write a file'), say('Understood, I did not write it.')),
    ],
    async run(s) {
      s.say('please write a file');
      answer(s, await s.controlRequest('can_use_tool'), 'deny');
      await s.result();
    },
  },
  {
    name: 'parallel-tools',
    about: 'one reply with two Bash tool_use blocks; two can_use_tool requests open at once, both allowed',
    script: [
      rule(
        'two',
        reply([
          text('Writing two files.'),
          toolUse('Bash', { command: 'echo a > a.txt', description: 'Write a.txt' }),
          toolUse('Bash', { command: 'echo b > b.txt', description: 'Write b.txt' }),
        ]),
        say('Both written.'),
      ),
    ],
    async run(s) {
      s.say('write two files');
      const first = await s.controlRequest('can_use_tool');
      const second = await s
        .waitFor((l) => l.type === 'control_request' && l.request_id !== first.request_id, {
          timeoutMs: 3_000,
          what: 'a second can_use_tool',
        })
        .catch(() => undefined);
      answer(s, first, 'allow');
      if (second !== undefined) answer(s, second, 'allow');
      else {
        const later = await s.waitFor(
          (l) => l.type === 'control_request' && l.request_id !== first.request_id,
          { what: 'the second can_use_tool' },
        );
        answer(s, later, 'allow');
      }
      await s.result();
    },
  },
  {
    name: 'steer',
    about: 'a user line written while a tool runs: the CLI shows it to the model at the next call, same turn',
    script: [
      rule(
        'slow',
        bash('sleep 2 && echo done > slow.txt', 'Sleep, then write a file'),
        say('Slow work done.'),
      ),
      rule('also', say('Noted your extra message.')),
    ],
    async run(s) {
      s.say('do the slow thing');
      answer(s, await s.controlRequest('can_use_tool'), 'allow');
      await pause(500);
      s.say('also mention this');
      await s.result();
      await pause(1_500);
    },
  },
  {
    name: 'delivery-receipts',
    about:
      'content-array user lines with a uuid, as the bridge writes them: command_lifecycle queued on read ' +
      '(a steer too, long before the turn takes it), before the answer to an initialize written after it; ' +
      'a repeated uuid dropped (mid-turn and after the turn)',
    script: [
      rule('first', say('First answer.')),
      rule('slow', bash('sleep 2', 'Wait'), say('Slow work done.')),
      rule('also', say('Noted your extra message.')),
    ],
    async run(s) {
      /** @param {string} text @param {string} uuid */
      const line = (text, uuid) => ({
        type: 'user',
        message: { role: 'user', content: [{ type: 'text', text }] },
        uuid,
      });
      const first = line('first message', '00000000-0000-4000-8000-000000000001');
      s.send(first);
      await s.result();
      let n = s.lines.length;
      s.send(line('do the slow thing', '00000000-0000-4000-8000-000000000002'));
      await s.waitFor((l) => l.type === 'assistant' && JSON.stringify(l).includes('tool_use'), {
        since: n,
        what: 'the tool call',
      });
      const steer = line('also mention this', '00000000-0000-4000-8000-000000000003');
      s.send(steer);
      s.send({ type: 'control_request', request_id: 'req_fence_1', request: { subtype: 'initialize' } });
      await pause(300);
      s.send(steer);
      await s.result(n);
      await pause(500);
      n = s.lines.length;
      s.send(first);
      await s.control({ subtype: 'initialize' }, 'req_fence_2');
      await pause(1_500);
    },
  },
  {
    name: 'interrupt',
    about: 'control_request interrupt while an answer streams; the turn ends with error_during_execution',
    script: [rule('long', say('word '.repeat(300), { chunkDelayMs: 40, chunkSize: 5 }))],
    async run(s) {
      s.say('a long answer please');
      await s.waitFor((l) => l.type === 'stream_event' && l.event?.type === 'content_block_delta', {
        what: 'the first delta',
      });
      await pause(300);
      await s.control({ subtype: 'interrupt' }, 'req_interrupt_1');
      await s.result();
    },
  },
  {
    name: 'clear',
    about: '/clear as a user message: conversation_reset, a new session id, then a turn in the new session',
    script: [rule('first', say('First answer.')), rule('second', say('Second answer, new session.'))],
    async run(s) {
      s.say('first message');
      await s.result();
      let n = s.lines.length;
      s.say('/clear');
      await s.result(n);
      n = s.lines.length;
      s.say('second message');
      await s.result(n);
    },
  },
  {
    name: 'subagent',
    about:
      'an Agent (Task) call: the sub-agent runs in the background with its own permission-needing tool; ' +
      'the CLI then starts a turn by itself with a <task-notification>',
    script: {
      rules: [
        rule(
          'delegate',
          agent({ description: 'Write a note', prompt: 'SUB: write a note' }),
          say('Started it.'),
        ),
        {
          match: 'SUB: write a note',
          kinds: ['subagent'],
          steps: [
            reply([
              text('Writing the note.'),
              toolUse('Bash', { command: 'echo note > note.txt', description: 'Write a note' }),
            ]),
            say('Note written.'),
          ],
        },
        rule('<task-notification>', say('The sub-agent wrote the note.')),
      ],
    },
    async run(s) {
      s.say('delegate a task');
      answer(s, await s.controlRequest('can_use_tool'), 'allow');
      await s.waitFor((l) => l.type === 'result' && l.origin?.kind === 'task-notification', {
        what: 'the self-started turn',
      });
    },
  },
  {
    name: 'set-model',
    about: 'control_request set_model and set_permission_mode between turns, then a turn on the new model',
    script: [rule('hi', say('Answered by the new model.'))],
    async run(s) {
      s.say('hi before');
      await s.result();
      const n = s.lines.length;
      await s.control({ subtype: 'set_model', model: 'claude-sonnet-4-5' }, 'req_set_model_1');
      await s.control({ subtype: 'set_permission_mode', mode: 'acceptEdits' }, 'req_set_mode_1');
      await s.control({ subtype: 'set_permission_mode', mode: 'default' }, 'req_set_mode_2');
      s.say('hi after');
      await s.result(n);
    },
  },
  {
    name: 'ask-user-question',
    about: 'AskUserQuestion arrives as can_use_tool; the answer adds `answers` to updatedInput',
    script: [
      rule(
        'ask',
        ask({
          question: 'Which colour?',
          header: 'Colour',
          options: [
            { label: 'Blue', description: 'Calm' },
            { label: 'Green', description: 'Fresh' },
          ],
        }),
        (/** @type {any} */ ctx) => say(`Got: ${ctx.lastToolResults[0]?.text ?? ''}`),
      ),
    ],
    async run(s) {
      s.say('ask me something');
      const req = await s.controlRequest('can_use_tool');
      s.respond(req, {
        behavior: 'allow',
        updatedInput: { ...req.request.input, answers: { 'Which colour?': 'Green' } },
      });
      await s.result();
    },
  },
  {
    name: 'api-529',
    about: 'two 529 overloaded_error answers, then success: the CLI retries by itself',
    script: [rule('hello', overloaded(2), say('Answered after two 529s.'))],
    async run(s) {
      s.say('hello');
      await s.result();
    },
  },
  {
    name: 'api-529-exhausted',
    about: '529 on every attempt with CLAUDE_CODE_MAX_RETRIES=1: the turn fails',
    env: { CLAUDE_CODE_MAX_RETRIES: '1' },
    script: [rule('hello', overloaded(50))],
    async run(s) {
      s.say('hello');
      await s.waitFor((l) => l.type === 'result', { timeoutMs: 60_000, what: 'a result' });
    },
  },
  {
    name: 'api-429',
    about: 'one 429 rate_limit_error with retry-after: 1, then success',
    script: [rule('hello', rateLimited(1), say('Answered after a 429.'))],
    async run(s) {
      s.say('hello');
      await s.result();
    },
  },
  {
    name: 'initialize-while-prompt-open',
    about: 'a repeated initialize control_request while a can_use_tool prompt is open (does it list it?)',
    script: [rule('write', bash('echo hi > out.txt', 'Write a file'), say('Wrote it.'))],
    async run(s) {
      s.say('please write a file');
      const req = await s.controlRequest('can_use_tool');
      await s.control({ subtype: 'initialize' }, 'req_initialize_1');
      answer(s, req, 'allow');
      await s.result();
    },
  },
];

/** @param {string} dir @returns {string[]} */
function walk(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

/** @param {Scenario} scenario */
async function record(scenario) {
  const model = createScriptedModel({ script: scenario.script });
  const { baseUrl } = await model.start();
  const root = join(ROOT, scenario.name);
  const s = new ClaudeSession({ root, baseUrl, args: scenario.args ?? [], env: scenario.env ?? {} });
  /** @type {string[]} */
  const stdin = [];
  const send = s.send.bind(s);
  s.send = (m) => {
    stdin.push(JSON.stringify(m));
    send(m);
  };
  try {
    await scenario.run(s, model);
    await pause(500);
  } finally {
    await s.close();
    await model.stop();
  }
  const out = (/** @type {string} */ suffix) => join(FIXTURES, `${scenario.name}.${suffix}`);
  writeFileSync(out('stdin.jsonl'), `${stdin.join('\n')}\n`);
  writeFileSync(out('stdout.jsonl'), `${s.raw.join('\n')}\n`);
  const files = walk(join(s.configDir, 'projects')).filter((f) => f.endsWith('.jsonl'));
  const sessions = s.lines
    .filter((l) => l.type === 'system' && l.subtype === 'init')
    .map((l) => String(l.session_id))
    .filter((id, i, all) => all.indexOf(id) === i);
  sessions.forEach((id, i) => {
    const f = files.find((p) => p.endsWith(`/${id}.jsonl`));
    if (f !== undefined) cpSync(f, out(i === 0 ? 'transcript.jsonl' : `transcript-${i + 1}.jsonl`));
  });
  const subagents = files.filter((f) => f.includes('/subagents/') && f.endsWith('.jsonl'));
  for (const [i, f] of subagents.entries()) cpSync(f, out(`subagent-${i + 1}.jsonl`));
  const summary = model.requests.map((/** @type {any} */ r) => ({
    index: r.index,
    method: r.method,
    url: r.url,
    kind: r.view?.kind,
    model: r.view?.model,
    userTextSource: r.view?.userTextSource,
    userText: r.view?.userText?.slice(0, 200),
    step: r.view?.step,
    agentId: r.headers['x-claude-code-agent-id'],
    answer: r.answer,
  }));
  writeFileSync(out('requests.jsonl'), `${summary.map((x) => JSON.stringify(x)).join('\n')}\n`);
  return { lines: s.lines.length, requests: model.requests.length, exit: s.exitCode ?? s.exitSignal };
}

const wanted = process.argv.slice(2);
mkdirSync(FIXTURES, { recursive: true });
let failed = 0;
for (const scenario of scenarios) {
  if (wanted.length > 0 && !wanted.includes(scenario.name)) continue;
  for (const f of readdirSync(FIXTURES)) if (f.startsWith(`${scenario.name}.`)) rmSync(join(FIXTURES, f));
  const started = Date.now();
  try {
    const r = await record(scenario);
    console.log(
      `${scenario.name}: ${r.lines} stdout lines, ${r.requests} API requests, exit ${r.exit}, ${Date.now() - started} ms`,
    );
  } catch (err) {
    failed++;
    console.error(`${scenario.name}: FAILED: ${err instanceof Error ? err.message : String(err)}`);
  }
}
process.exitCode = failed > 0 ? 1 : 0;
