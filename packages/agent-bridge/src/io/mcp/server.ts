/**
 * Switchyard's MCP server, as a pure core: the tools that let the agent send files and pictures to the
 * conversation it serves, and the answer to each JSON-RPC message `claude` sends. The HTTP shell that
 * carries the messages is `endpoint.ts`; what a tool call does is the bridge's file outbox
 * (`./file-outbox.ts`).
 *
 * The server is stateless (no MCP session): every message is answered from this table alone, so a
 * restarted bridge answers a `claude` that connected to its predecessor without a new handshake.
 *
 * The descriptions are written for the model: what each tool does, which paths are accepted, the
 * limits, and what the result says.
 */
import { z } from 'zod';
import type { FileTool } from './file-check.js';
import { SCHEDULE_TOOLS, type ScheduleCall, scheduleToolCall } from './schedule-tools.js';
import type { ToolAnswer } from './tool-answer.js';

/** The server's name in the MCP config: tools are `mcp__switchyard__<tool>`. */
export const MCP_SERVER_NAME = 'switchyard';

const PATHS =
  'Paths are absolute or relative to the working directory, and must be inside the working directory (or a directory the operator allowed); symlinks are resolved first.';
const CAPTION = z
  .string()
  .max(4096)
  .optional()
  .describe('Optional caption, Markdown like a reply; Telegram shows at most 1024 characters of it.');
const ONE_PATH = z.string().min(1).max(4096);

/** The tools: name, title, description for the model, and the arguments' schema. */
const TOOLS = [
  {
    name: 'send_file',
    title: 'Send a file to the chat',
    description: `Sends one file to the Telegram chat you are talking in, as a document (any type, up to 50 MB), as a reply to the user's message. ${PATHS} Returns once Telegram has the file, or says it is queued if the chat is briefly unreachable; an error says which path was refused and why, and nothing is sent then.`,
    input: z.object({ path: ONE_PATH.describe('The file to send.'), caption: CAPTION }),
  },
  {
    name: 'send_photo',
    title: 'Show a picture in the chat',
    description: `Sends one image to the Telegram chat you are talking in, shown inline (JPEG, PNG or WebP up to 10 MB; other formats or larger files are sent as a document instead, and the result says so). Use it for charts and screenshots. ${PATHS}`,
    input: z.object({ path: ONE_PATH.describe('The image to send.'), caption: CAPTION }),
  },
  {
    name: 'send_files',
    title: 'Send several files as an album',
    description: `Sends 2 to 10 files to the Telegram chat you are talking in as one album, with one caption. Images (JPEG, PNG, WebP up to 10 MB) are shown inline when all files are images; otherwise all go as documents. All paths are checked before anything is sent: one refused path sends nothing. ${PATHS}`,
    input: z.object({
      paths: z.array(ONE_PATH).min(1).max(10).describe('The files, in album order.'),
      caption: CAPTION,
    }),
  },
] as const satisfies readonly { name: FileTool; title: string; description: string; input: z.ZodObject }[];

/** The tools' full names, as `--allowedTools` takes them. */
export const FILE_TOOL_NAMES = TOOLS.map((tool) => `mcp__${MCP_SERVER_NAME}__${tool.name}`);

/** One tool call as the file outbox takes it, without its idempotency key. */
export interface ToolCallInput {
  tool: FileTool;
  paths: string[];
  caption?: string | undefined;
}

export type { ToolAnswer } from './tool-answer.js';

/** A JSON-RPC request id. */
export type RpcId = string | number;

/** How the shell answers one message. */
export type McpStep =
  /** Answer with this JSON-RPC message as `application/json`. */
  | { kind: 'reply'; message: object }
  /** A notification or a response from the client: 202, no body. */
  | { kind: 'accepted' }
  /** A tool call to carry out; its result is {@link toolResult} under `rpcId`. */
  | { kind: 'call'; rpcId: RpcId; call: ToolCallInput }
  /** A schedule tool call (`schedule-tools.ts`): asked of the gateway, answered under `rpcId`. */
  | { kind: 'schedule'; rpcId: RpcId; call: ScheduleCall }
  /** Not a JSON-RPC message this server takes: HTTP 400 with this error message. */
  | { kind: 'invalid'; message: object };

/** Protocol revisions this server speaks; a client asking for another gets the newest. */
const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

const messageSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number()]).optional(),
  method: z.string().optional(),
  params: z.record(z.string(), z.unknown()).optional(),
});

/** Decides how to answer one parsed JSON-RPC message (a batch is not accepted: MCP dropped batches). */
export function answerMessage(value: unknown, version: string): McpStep {
  const parsed = messageSchema.safeParse(value);
  if (!parsed.success) return { kind: 'invalid', message: rpcError(null, -32600, 'Invalid Request') };
  const { id, method, params } = parsed.data;
  if (method === undefined || id === undefined) return { kind: 'accepted' };
  switch (method) {
    case 'initialize': {
      const asked = params?.protocolVersion;
      const protocolVersion =
        typeof asked === 'string' && PROTOCOL_VERSIONS.includes(asked) ? asked : PROTOCOL_VERSIONS[0];
      return reply(id, {
        protocolVersion,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: MCP_SERVER_NAME, version },
      });
    }
    case 'ping':
      return reply(id, {});
    case 'tools/list':
      return reply(id, {
        tools: [...TOOLS, ...SCHEDULE_TOOLS].map(({ name, title, description, input }) => ({
          name,
          title,
          description,
          inputSchema: z.toJSONSchema(input),
        })),
      });
    case 'tools/call': {
      const scheduled = scheduleToolCall(params?.name, params?.arguments);
      if (scheduled?.ok) return { kind: 'schedule', rpcId: id, call: scheduled.call };
      if (scheduled) return reply(id, toolResult({ ok: false, text: scheduled.text }));
      const tool = TOOLS.find((t) => t.name === params?.name);
      if (!tool) return reply(id, toolResult({ ok: false, text: `unknown tool ${String(params?.name)}` }));
      const args = tool.input.safeParse(params?.arguments ?? {});
      if (!args.success) {
        return reply(
          id,
          toolResult({ ok: false, text: `invalid arguments: ${z.prettifyError(args.error)}` }),
        );
      }
      const { caption } = args.data;
      const paths = 'paths' in args.data ? [...args.data.paths] : [args.data.path];
      return { kind: 'call', rpcId: id, call: { tool: tool.name, paths, caption } };
    }
    default:
      return reply(id, rpcError(id, -32601, `Method not found: ${method}`), true);
  }
}

/** The `tools/call` result for an answer. */
export function toolResult(answer: ToolAnswer): object {
  return { content: [{ type: 'text', text: answer.text }], ...(answer.ok ? {} : { isError: true }) };
}

/** A JSON-RPC response carrying `result`. */
export function rpcResult(id: RpcId, result: object): object {
  return { jsonrpc: '2.0', id, result };
}

function reply(id: RpcId, body: object, isError = false): McpStep {
  return { kind: 'reply', message: isError ? body : rpcResult(id, body) };
}

function rpcError(id: RpcId | null, code: number, message: string): object {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/**
 * The SSE event id of a call in flight: the JSON-RPC id and the outbox's idempotency key. A client whose
 * stream broke (the bridge restarted) reconnects with it as `Last-Event-ID`, which is all a new bridge
 * needs to join the call and answer it under the id the client waits for.
 */
export function resumeToken(rpcId: RpcId, key: string): string {
  return Buffer.from(JSON.stringify([rpcId, key])).toString('base64url');
}

/** The inverse of {@link resumeToken}; undefined for anything this server did not issue. */
export function parseResumeToken(token: string): { rpcId: RpcId; key: string } | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [rpcId, key] = value as unknown[];
    if ((typeof rpcId !== 'string' && typeof rpcId !== 'number') || typeof key !== 'string') return undefined;
    if (key.length === 0 || key.length > 200) return undefined;
    return { rpcId, key };
  } catch {
    return undefined;
  }
}
