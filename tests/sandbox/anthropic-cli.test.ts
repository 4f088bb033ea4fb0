/**
 * The scripted model driving the real, pinned `claude` CLI in the bridge's stream-json mode: each test
 * gets its own working directory and CLAUDE_CONFIG_DIR, talks only to 127.0.0.1, and kills the CLI at
 * the end.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLAUDE_STREAM_ARGS } from '@switchyard/agent-bridge';
import {
  bash,
  createScriptedModel,
  type Rule,
  rule,
  type ScriptedModel,
  say,
  scriptedClaudeEnv,
} from '@switchyard/sandbox';
import { afterEach, describe, expect, it } from 'vitest';

const CLAUDE = fileURLToPath(new URL('../../node_modules/.bin/claude', import.meta.url));

type Line = { type: string; [key: string]: unknown };

interface Cli {
  readonly cwd: string;
  readonly lines: Line[];
  send(message: unknown): void;
  waitFor(predicate: (l: Line) => boolean, what: string): Promise<Line>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function startCli(rules: readonly Rule[]): Promise<{ cli: Cli; model: ScriptedModel }> {
  const model = createScriptedModel({ script: rules });
  const { baseUrl } = await model.start();
  cleanups.push(() => model.stop());
  const root = mkdtempSync(join(tmpdir(), 'switchyard-anthropic-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const cwd = join(root, 'work');
  const configDir = join(root, 'config');
  for (const d of [cwd, configDir]) mkdirSync(d);
  const child: ChildProcessWithoutNullStreams = spawn(
    CLAUDE,
    // The flags the bridge starts the CLI with, so the scripted API is tested as the bridge meets it.
    [...CLAUDE_STREAM_ARGS],
    {
      cwd,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: root,
        ...scriptedClaudeEnv({ baseUrl, configDir }),
      },
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const lines: Line[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let buffer = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString('utf8');
  });
  child.stdout.on('data', (d: Buffer) => {
    buffer += d.toString('utf8');
    const parts = buffer.split('\n');
    buffer = parts.pop() ?? '';
    for (const p of parts) if (p.trim() !== '') lines.push(JSON.parse(p) as Line);
    for (const w of [...waiters]) w();
  });
  child.once('exit', () => {
    for (const w of [...waiters]) w();
  });
  const cli: Cli = {
    cwd,
    lines,
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    waitFor: (predicate, what) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => finish(new Error(`timed out waiting for ${what}; stderr: ${stderr}`)),
          30_000,
        );
        const finish = (err: Error | undefined, line?: Line) => {
          clearTimeout(timer);
          waiters.delete(check);
          if (err !== undefined) reject(err);
          else resolve(line as Line);
        };
        const check = () => {
          const line = lines.find(predicate);
          if (line !== undefined) finish(undefined, line);
          else if (child.exitCode !== null)
            finish(new Error(`claude exited before ${what}; stderr: ${stderr}`));
        };
        waiters.add(check);
        check();
      }),
  };
  return { cli, model };
}

const userLine = (text: string) => ({ type: 'user', message: { role: 'user', content: text } });

describe('the real claude CLI against the scripted model', () => {
  it('streams an answer: text deltas live, then the consolidated assistant message and a result', async () => {
    const answer = 'Hello from the **scripted** model.';
    const { cli, model } = await startCli([rule('hello', say(answer, { chunkSize: 6 }))]);
    cli.send(userLine('hello there'));
    const result = await cli.waitFor((l) => l.type === 'result', 'the result');

    const init = cli.lines.find((l) => l.type === 'system' && l.subtype === 'init');
    expect(init?.session_id).toBe(result.session_id);
    const deltas = cli.lines
      .filter((l) => l.type === 'stream_event')
      .map((l) => (l.event as { type: string; delta?: { type: string; text?: string } }).delta)
      .filter((d) => d?.type === 'text_delta')
      .map((d) => d?.text);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(answer);
    const assistant = cli.lines.find((l) => l.type === 'assistant');
    expect((assistant?.message as { content: unknown[] } | undefined)?.content).toEqual([
      { type: 'text', text: answer },
    ]);
    expect(result).toMatchObject({ subtype: 'success', is_error: false, result: answer });

    const [request] = model.messageRequests();
    expect(request?.url).toBe('/v1/messages?beta=true');
    expect(request?.view).toMatchObject({ kind: 'main', userText: 'hello there', step: 0 });
  });

  it('runs a permission-needing tool once the prompt is answered with control_response allow', async () => {
    const { cli, model } = await startCli([
      rule('write a file', bash('echo hi > out.txt', 'Write a file'), say('Wrote out.txt.')),
    ]);
    cli.send(userLine('please write a file'));
    const prompt = await cli.waitFor(
      (l) => l.type === 'control_request' && (l.request as { subtype: string }).subtype === 'can_use_tool',
      'the permission prompt',
    );
    const request = prompt.request as { tool_name: string; input: unknown; tool_use_id: string };
    expect(request).toMatchObject({ tool_name: 'Bash', input: { command: 'echo hi > out.txt' } });
    expect(existsSync(join(cli.cwd, 'out.txt'))).toBe(false);

    cli.send({
      type: 'control_response',
      response: {
        subtype: 'success',
        request_id: prompt.request_id,
        response: { behavior: 'allow', updatedInput: request.input },
      },
    });
    const result = await cli.waitFor((l) => l.type === 'result', 'the result');
    expect(result).toMatchObject({ subtype: 'success', result: 'Wrote out.txt.' });
    expect(readFileSync(join(cli.cwd, 'out.txt'), 'utf8')).toBe('hi\n');
    const second = model.messageRequests()[1];
    expect(second?.view).toMatchObject({ step: 1, userText: 'please write a file' });
    expect(second?.view?.toolResults).toEqual([
      { toolUseId: request.tool_use_id, text: expect.any(String), isError: false },
    ]);
  });
});
