// @ts-check
/**
 * One real `claude` CLI process in stream-json mode, pointed at a scripted model, for the fixture
 * recorder, started with the bridge's own flags (`CLAUDE_STREAM_ARGS`), so a fixture records what the
 * bridge will read. Owns a working directory and a CLAUDE_CONFIG_DIR of its own under `root`, collects stdout
 * lines, and lets a scenario write input lines and wait for output lines.
 */

import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLAUDE_STREAM_ARGS } from '../dist/index.js';

const repo = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

/** The pinned CLI in the workspace. */
export const CLAUDE_BIN = join(repo, 'node_modules/.bin/claude');

/**
 * @typedef {Record<string, any>} Line  one parsed stdout line
 */

export class ClaudeSession {
  /**
   * @param {{ root: string, baseUrl: string, args?: string[], env?: Record<string, string> }} options
   */
  constructor({ root, baseUrl, args = [], env = {} }) {
    rmSync(root, { recursive: true, force: true });
    this.cwd = join(root, 'work');
    this.configDir = join(root, 'config');
    mkdirSync(this.cwd, { recursive: true });
    mkdirSync(this.configDir, { recursive: true });
    /** @type {string[]} raw stdout lines */
    this.raw = [];
    /** @type {Line[]} */
    this.lines = [];
    this.stderr = '';
    /** @type {Set<() => void>} */
    this.waiters = new Set();
    this.child = spawn(CLAUDE_BIN, [...CLAUDE_STREAM_ARGS, ...args], {
      cwd: this.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: root,
        CLAUDE_CONFIG_DIR: this.configDir,
        ANTHROPIC_BASE_URL: baseUrl,
        ANTHROPIC_API_KEY: 'sk-test',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        ...env,
      },
    });
    this.exited = new Promise((resolveExit) => {
      this.child.on('exit', (code, signal) => {
        this.exitCode = code;
        this.exitSignal = signal;
        for (const w of [...this.waiters]) w();
        resolveExit(undefined);
      });
    });
    let buf = '';
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (/** @type {string} */ chunk) => {
      buf += chunk;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim() === '') continue;
        this.raw.push(line);
        try {
          this.lines.push(JSON.parse(line));
        } catch {
          this.lines.push({ type: '(unparsed)', line });
        }
        for (const w of [...this.waiters]) w();
      }
    });
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (/** @type {string} */ d) => {
      this.stderr += d;
    });
  }

  /** Writes one JSON line to stdin. @param {unknown} message */
  send(message) {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** Writes a user text message. @param {string} text */
  say(text) {
    this.send({ type: 'user', message: { role: 'user', content: text } });
  }

  /**
   * Resolves with the first stdout line at index >= `since` matching `predicate`.
   * @param {(line: Line) => boolean} predicate
   * @param {{ since?: number, timeoutMs?: number, what?: string }} [options]
   * @returns {Promise<Line>}
   */
  waitFor(predicate, { since = 0, timeoutMs = 30_000, what = 'a matching line' } = {}) {
    return new Promise((resolveLine, reject) => {
      const check = () => {
        const found = this.lines.slice(since).find(predicate);
        if (found !== undefined) {
          finish();
          resolveLine(found);
        } else if (this.exitCode !== undefined || this.exitSignal !== undefined) {
          finish();
          reject(new Error(`claude exited before ${what}; stderr: ${this.stderr.slice(-2000)}`));
        }
      };
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out waiting for ${what}; last lines: ${this.raw.slice(-3).join('\n')}`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  /** Waits for the next `result` line from `since`. @param {number} [since] */
  result(since = 0) {
    return this.waitFor((l) => l.type === 'result', { since, what: 'a result' });
  }

  /** Waits for a `control_request` of the given subtype. @param {string} subtype @param {number} [since] */
  controlRequest(subtype, since = 0) {
    return this.waitFor((l) => l.type === 'control_request' && l.request?.subtype === subtype, {
      since,
      what: `control_request ${subtype}`,
    });
  }

  /**
   * Answers a `can_use_tool` request.
   * @param {Line} request the control_request line
   * @param {Record<string, unknown>} response e.g. `{ behavior: 'allow', updatedInput }`
   */
  respond(request, response) {
    this.send({
      type: 'control_response',
      response: { subtype: 'success', request_id: request.request_id, response },
    });
  }

  /** Sends a control request and waits for its control_response. @param {Record<string, unknown>} request */
  async control(request, id = `req_${Math.random().toString(36).slice(2, 10)}`) {
    const since = this.lines.length;
    this.send({ type: 'control_request', request_id: id, request });
    return this.waitFor((l) => l.type === 'control_response' && l.response?.request_id === id, {
      since,
      what: `control_response to ${String(request.subtype)}`,
    });
  }

  /** Closes stdin, waits for exit, kills the process group if it lingers. */
  async close(graceMs = 5_000) {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
