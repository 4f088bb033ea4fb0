/**
 * Switchyard's MCP server: the tools that let the agent send files and pictures to the conversation it
 * serves. `claude` starts it (stdio) from the MCP config the bridge writes (`../file-tools.ts`); each
 * call is carried out by the bridge over its tool socket (`tool-client.ts`), which copies the files and
 * has the gateway upload them, and the call returns once Telegram has them.
 *
 * The descriptions are written for the model: what each tool does, which paths are accepted, the
 * limits, and what the result says.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { ToolClient } from './tool-client.js';

/** The server's name in the MCP config: tools are `mcp__switchyard__<tool>`. */
export const MCP_SERVER_NAME = 'switchyard';

/** The tools' full names, as `--allowedTools` takes them. */
export const FILE_TOOL_NAMES = ['send_file', 'send_photo', 'send_files'].map(
  (tool) => `mcp__${MCP_SERVER_NAME}__${tool}`,
);

const PATHS =
  'Paths are absolute or relative to the working directory, and must be inside the working directory (or a directory the operator allowed); symlinks are resolved first.';
const CAPTION = z
  .string()
  .max(4096)
  .optional()
  .describe('Optional caption, Markdown like a reply; Telegram shows at most 1024 characters of it.');

/** Builds the MCP server over a client of the bridge's tool socket. Nothing runs until it is connected. */
export function createMcpServer(client: ToolClient, version: string): McpServer {
  const server = new McpServer({ name: MCP_SERVER_NAME, version });
  const run = async (
    call: Parameters<ToolClient>[0],
    signal: AbortSignal,
  ): Promise<{ content: { type: 'text'; text: string }[]; isError?: boolean }> => {
    const answer = await client(call, signal);
    return { content: [{ type: 'text', text: answer.text }], ...(answer.ok ? {} : { isError: true }) };
  };
  server.registerTool(
    'send_file',
    {
      title: 'Send a file to the chat',
      description: `Sends one file to the Telegram chat you are talking in, as a document (any type, up to 50 MB), as a reply to the user's message. ${PATHS} Returns once Telegram has the file, or says it is queued if the chat is briefly unreachable; an error says which path was refused and why, and nothing is sent then.`,
      inputSchema: { path: z.string().min(1).describe('The file to send.'), caption: CAPTION },
    },
    ({ path, caption }, extra) => run({ tool: 'send_file', paths: [path], caption }, extra.signal),
  );
  server.registerTool(
    'send_photo',
    {
      title: 'Show a picture in the chat',
      description: `Sends one image to the Telegram chat you are talking in, shown inline (JPEG, PNG or WebP up to 10 MB; other formats or larger files are sent as a document instead, and the result says so). Use it for charts and screenshots. ${PATHS}`,
      inputSchema: { path: z.string().min(1).describe('The image to send.'), caption: CAPTION },
    },
    ({ path, caption }, extra) => run({ tool: 'send_photo', paths: [path], caption }, extra.signal),
  );
  server.registerTool(
    'send_files',
    {
      title: 'Send several files as an album',
      description: `Sends 2 to 10 files to the Telegram chat you are talking in as one album, with one caption. Images (JPEG, PNG, WebP up to 10 MB) are shown inline when all files are images; otherwise all go as documents. All paths are checked before anything is sent: one refused path sends nothing. ${PATHS}`,
      inputSchema: {
        paths: z.array(z.string().min(1)).min(1).max(10).describe('The files, in album order.'),
        caption: CAPTION,
      },
    },
    ({ paths, caption }, extra) => run({ tool: 'send_files', paths, caption }, extra.signal),
  );
  return server;
}
