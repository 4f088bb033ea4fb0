/**
 * The MCP server's side of the tool socket (`../tool-socket.ts`): sends one call and waits for its
 * reply, reconnecting when the bridge goes away mid-call. The bridge may restart at any moment while
 * `claude` (and so this process) keeps running; the call is then asked again with the same id, and the
 * bridge's file outbox makes the second asking join the first instead of sending twice.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A call as the bridge takes it (see `toolCallSchema` in `../tool-socket.ts`). */
export interface ToolCallInput {
  tool: 'send_file' | 'send_photo' | 'send_files';
  paths: string[];
  caption?: string | undefined;
}

/** The bridge's answer. */
export interface ToolAnswer {
  ok: boolean;
  text: string;
}

/** Options of {@link createToolClient}. */
export interface ToolClientOptions {
  socketPath: string;
  /** How long a call keeps re-asking a bridge that is down before it gives up (default 10 min). */
  giveUpAfterMs?: number;
  /** Pause between attempts (default 250 ms). */
  retryMs?: number;
}

/** Asks the bridge to carry out a call; resolves with its answer, or a tool error after giving up. */
export type ToolClient = (call: ToolCallInput, signal?: AbortSignal) => Promise<ToolAnswer>;

/** A client over the bridge's tool socket; each call gets its own idempotency key and connection. */
export function createToolClient(options: ToolClientOptions): ToolClient {
  const giveUpAfterMs = options.giveUpAfterMs ?? 600_000;
  const retryMs = options.retryMs ?? 250;
  return async (call, signal) => {
    const id = randomUUID();
    const deadline = Date.now() + giveUpAfterMs;
    let lastError = 'the bridge is not reachable';
    while (Date.now() < deadline && !signal?.aborted) {
      const answer = await attempt(options.socketPath, { id, ...call }, signal).catch((err: unknown) => {
        lastError = err instanceof Error ? err.message : String(err);
        return undefined;
      });
      if (answer) return answer;
      await sleep(retryMs);
    }
    return {
      ok: false,
      text: `Switchyard's bridge did not answer: ${lastError}. Nothing is known to be sent.`,
    };
  };
}

/** One connection: write the call, read lines until the reply with its id; rejects if the socket ends first. */
function attempt(
  socketPath: string,
  call: ToolCallInput & { id: string },
  signal: AbortSignal | undefined,
): Promise<ToolAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    socket.setEncoding('utf8');
    let buffer = '';
    let done = false;
    const finish = (error: Error | undefined, answer?: ToolAnswer): void => {
      if (done) return;
      done = true;
      signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      if (answer) resolve(answer);
      else reject(error ?? new Error('the bridge closed the connection'));
    };
    const onAbort = (): void => finish(new Error('cancelled'));
    signal?.addEventListener('abort', onAbort);
    socket.on('connect', () => socket.write(`${JSON.stringify(call)}\n`));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        try {
          const reply = JSON.parse(line) as { id?: unknown; ok?: unknown; text?: unknown };
          if (reply.id === call.id && typeof reply.ok === 'boolean' && typeof reply.text === 'string') {
            finish(undefined, { ok: reply.ok, text: reply.text });
            return;
          }
        } catch {
          // not a reply line; keep reading
        }
      }
    });
    socket.on('error', (err) => finish(err));
    socket.on('close', () => finish(undefined));
  });
}
