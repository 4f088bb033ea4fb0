/**
 * A `can_use_tool` request on a stdout line over the line cap (a Write of a huge file) was skipped with
 * no answer, and the CLI waited on it for ever. It is answered from its `request_id`, read from the
 * line's head: denied, with the reason.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Session } from '../src/core/session/session.js';
import { translateLine, translateOversized } from '../src/core/translate/translator.js';
import { StdoutReader } from '../src/io/process/stdout-reader.js';

const CAP = 64 * 1024;
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Reads `lines` back through the reader and the session, as the conversation's pump does. */
function answersTo(lines: string[]): unknown[] {
  dir = mkdtempSync(join(tmpdir(), 'sy-oversized-'));
  const path = join(dir, 'stdout.log');
  writeFileSync(path, `${lines.join('\n')}\n`);
  const reader = new StdoutReader(path, 0, CAP);
  const session = new Session();
  const writes: string[] = [];
  for (const line of reader.read()) {
    const events =
      line.text === undefined ? translateOversized(line) : translateLine(line.text, line.bytes, CAP);
    writes.push(...session.onEvents(events, 0).writes);
  }
  reader.close();
  return writes.map((w) => JSON.parse(w));
}

/** A `can_use_tool` request as the CLI prints it (2.1.328's key order), its input `size` bytes long. */
function request(requestId: string, subtype: string, size: number, content = 'x'): string {
  return JSON.stringify({
    type: 'control_request',
    request_id: requestId,
    request: {
      subtype,
      tool_name: 'Write',
      input: { file_path: '/w/big.txt', content: content.repeat(Math.ceil(size / content.length)) },
      tool_use_id: 'toolu_1',
    },
  });
}

describe('a control request on a line over the cap', () => {
  it('a can_use_tool request is denied from its request_id, with the reason', () => {
    const answers = answersTo([request('req-big', 'can_use_tool', 3 * CAP)]);
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({
      type: 'control_response',
      response: { subtype: 'success', request_id: 'req-big', response: { behavior: 'deny' } },
    });
    const message = (answers[0] as { response: { response: { message: string } } }).response.response.message;
    expect(message).toMatch(/too large for Switchyard to show the user/);
  });

  it('text inside the input cannot pose as the request id, and other requests are refused, not denied', () => {
    const forged = request('req-real', 'can_use_tool', 3 * CAP, '"request_id":"req-forged",');
    const other = request('req-other', 'hook_callback', 3 * CAP);
    const answers = answersTo([forged, other]);
    expect(answers).toMatchObject([
      { response: { request_id: 'req-real', response: { behavior: 'deny' } } },
      { response: { subtype: 'error', request_id: 'req-other' } },
    ]);
  });

  it("a turn's result over the cap still ends the turn, read from the keys the CLI writes last", () => {
    // 2.1.328's key order: `permission_denials` (the denied input, whole) before `is_error`, `subtype`, `type`.
    const denied = {
      tool_name: 'Write',
      tool_input: { c: 'x'.repeat(3 * CAP), type: 'result', subtype: 'error_x', is_error: true },
    };
    const result = `{"duration_api_ms":79,"session_id":"s","permission_denials":[${JSON.stringify(denied)}],"is_error":false,"num_turns":2,"subtype":"success","result":"Done \\",\\"type\\":\\"x","type":"result","duration_ms":250}`;
    expect(JSON.parse(result).type).toBe('result');
    const events = translateOversized({
      tail: result.slice(-4096),
      head: result.slice(0, 4096),
      bytes: result.length,
    });
    expect(events).toEqual([
      { kind: 'skipped', reason: 'oversized', bytes: result.length },
      { kind: 'result', subtype: 'success', isError: false },
    ]);
  });

  it('an oversized line that is not a control request gets no answer', () => {
    const assistant = JSON.stringify({
      type: 'assistant',
      message: {
        content: [{ type: 'text', text: `"type":"control_request","request_id":"x" ${'y'.repeat(3 * CAP)}` }],
      },
    });
    expect(answersTo([assistant])).toEqual([]);
  });
});
