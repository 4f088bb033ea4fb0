#!/usr/bin/env node
// A stand-in CLI that floods stdout: for every `user` line on stdin it prints the CLI's receipt
// (`command_lifecycle queued`) and then one streamed answer of FLOOD_LINES text deltas (default 100,000),
// FLOOD_BATCH lines at a time with a pause of FLOOD_PAUSE_MS between batches, then the consolidated
// `assistant` text "answer <n>" and a `result`. Control requests are answered with success. The line shapes
// are the recorded CLI's (fixture `streamed-answer`); it models nothing else of the CLI.
import { randomUUID } from 'node:crypto';
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

const LINES = Number(process.env.FLOOD_LINES ?? 100_000);
const BATCH = Number(process.env.FLOOD_BATCH ?? 500);
const PAUSE = Number(process.env.FLOOD_PAUSE_MS ?? 5);
const session = randomUUID();
const out = (value) => {
  const bytes = Buffer.from(`${JSON.stringify(value)}\n`);
  for (let done = 0; done < bytes.length; ) done += writeSync(1, bytes, done);
};
const event = (ev, id) => ({
  type: 'stream_event',
  event: ev,
  session_id: session,
  parent_tool_use_id: null,
  uuid: randomUUID(),
  api_message_id: id,
});
let turns = 0;
let initialized = false;
for await (const raw of createInterface({ input: process.stdin })) {
  let line;
  try {
    line = JSON.parse(raw);
  } catch {
    continue;
  }
  if (line.type === 'control_request') {
    out({
      type: 'control_response',
      response: { subtype: 'success', request_id: line.request_id, response: { commands: [] } },
    });
    continue;
  }
  if (line.type !== 'user') continue;
  if (line.uuid)
    out({
      type: 'command_lifecycle',
      command_uuid: line.uuid,
      state: 'queued',
      uuid: randomUUID(),
      session_id: session,
    });
  if (!initialized) {
    initialized = true;
    out({
      type: 'system',
      subtype: 'init',
      cwd: process.cwd(),
      session_id: session,
      tools: [],
      model: 'fake',
      permissionMode: 'default',
      uuid: randomUUID(),
    });
  }
  turns += 1;
  const id = `msg_flood_${turns}`;
  const usage = {
    input_tokens: 10,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: 10,
  };
  out(
    event(
      {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model: 'fake',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage,
        },
      },
      id,
    ),
  );
  out(event({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, id));
  for (let i = 0; i < LINES; i++) {
    out(
      event({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `${i % 10}` } }, id),
    );
    if (i % BATCH === BATCH - 1) await sleep(PAUSE);
  }
  const text = `answer ${turns}`;
  out({
    type: 'assistant',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: 'fake',
      content: [{ type: 'text', text }],
      stop_reason: null,
      stop_sequence: null,
      usage,
    },
    parent_tool_use_id: null,
    session_id: session,
    uuid: randomUUID(),
  });
  out(event({ type: 'content_block_stop', index: 0 }, id));
  out(event({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage }, id));
  out(event({ type: 'message_stop' }, id));
  out({
    type: 'result',
    subtype: 'success',
    is_error: false,
    duration_ms: 1,
    duration_api_ms: 1,
    num_turns: 1,
    result: text,
    stop_reason: 'end_turn',
    session_id: session,
    total_cost_usd: 0.001 * turns,
    usage,
    uuid: randomUUID(),
  });
}
