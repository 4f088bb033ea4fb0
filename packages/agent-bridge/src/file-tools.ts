/**
 * The file tools as one piece the bridge starts and stops per Claude session: the MCP config that adds
 * Switchyard's server (`mcp/main.ts`) to the agent's own servers, the command-line flags that let its
 * tools run without a permission prompt, the tool socket the server calls back on, and the file outbox
 * behind it.
 *
 * When no prompt: the tools only send to the conversation the user is already in, from the directories
 * the operator allowed, so in a private chat they run unasked (`--allowedTools` names just these three;
 * every other tool keeps its prompts). In a group the people reading along need not be on the allowlist,
 * and whether they are cannot be told (the Bot API lists administrators and a member count, not the
 * members): there each send is a permission prompt with buttons, answered by an allowed user, before
 * anything leaves the working directory ({@link confirmsFileSends}; per chat `confirmFileSends`).
 *
 * Layout in the session's state directory: `mcp.json` (the merged config, rewritten at each start),
 * `tools.sock` (elsewhere when that path is too long for a socket: `toolSocketPath`), and `files/` (the outbox's index, see `file-outbox.ts`); the copies to send are made in
 * the agent's exchange directory, which the gateway can read.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExchangeOptions, FrameOf, Logger } from '@switchyard/protocol';
import { FileOutbox, type FileTarget } from './file-outbox.js';
import { FILE_TOOL_NAMES, MCP_SERVER_NAME } from './mcp/server.js';
import { writeFileAtomic } from './outbox.js';
import { createToolSocket, type ToolSocket, toolSocketPath } from './tool-socket.js';

/** The agent's `files` settings. */
export interface FilesConfig {
  /** Offer the tools (default true). Off: no server, no flags; the agent's own MCP config is used as is. */
  enabled?: boolean | undefined;
  /** Directories besides the working directory whose files may be sent. */
  extraDirs?: readonly string[] | undefined;
  /** How long a tool call waits for Telegram before it answers "queued" (default 60 s). */
  waitMs?: number | undefined;
}

/**
 * Whether a conversation's file sends wait for a permission prompt: as its chat's `confirmFileSends`
 * says, else yes in a group (a negative chat id) and for the one session of a `shared` agent (no route:
 * it may send into any chat), no in a private chat.
 */
export function confirmsFileSends(
  setting: boolean | undefined,
  route: { chatId: number } | undefined,
): boolean {
  return setting ?? (route === undefined || route.chatId < 0);
}

/** Options of {@link createFileTools}. */
export interface FileToolsOptions extends FilesConfig {
  /** The session's state directory. */
  stateDir: string;
  /** Ask before each send (the CLI's permission prompt) instead of allowing the tools outright. */
  confirmSends?: boolean | undefined;
  /** Where the files to send are copied, for the gateway to read. */
  exchange: ExchangeOptions;
  workDir: string;
  /** The agent's own MCP config file, merged under Switchyard's server. */
  userMcpConfig?: string | undefined;
  /** Hands a reliable frame to the gateway channel. */
  emit(frame: FrameOf<'file_send'>): void;
  /** The conversation a call sends to: the running turn's route, or the last one. */
  target(): FileTarget | undefined;
  log: Logger;
}

/** The file tools' handle. */
export interface FileTools {
  /** The `--mcp-config` to start the CLI with (the merged file, or the agent's own when disabled). */
  readonly mcpConfig: string | undefined;
  /** Flags to add to the CLI's command line. */
  readonly claudeArgs: readonly string[];
  /** Writes the merged config, re-sends unsettled files, and listens. Throws on a server-name clash. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The gateway's `file_sent`. */
  settle(frame: FrameOf<'file_sent'>): void;
}

/** The MCP server program, built next to this module (`dist/mcp/main.js`, also when run from `src/`). */
export const MCP_MAIN = join(dirname(dirname(fileURLToPath(import.meta.url))), 'dist', 'mcp', 'main.js');

/** Builds the file tools; nothing is written or listened on until `start()`. */
export function createFileTools(options: FileToolsOptions): FileTools {
  const enabled = options.enabled ?? true;
  if (!enabled) {
    return {
      mcpConfig: options.userMcpConfig,
      claudeArgs: [],
      start: async () => {},
      stop: async () => {},
      settle: () => {},
    };
  }
  const log = options.log.child({ component: 'files' });
  const socketPath = toolSocketPath(options.stateDir);
  const configPath = join(options.stateDir, 'mcp.json');
  let outbox: FileOutbox | undefined;
  let socket: ToolSocket | undefined;
  return {
    mcpConfig: configPath,
    claudeArgs: options.confirmSends ? [] : ['--allowedTools', FILE_TOOL_NAMES.join(',')],
    async start() {
      writeFileAtomic(
        configPath,
        JSON.stringify(mergedMcpConfig(options.userMcpConfig, socketPath), null, 2),
      );
      const box = new FileOutbox({
        dir: join(options.stateDir, 'files'),
        exchange: options.exchange,
        workDir: options.workDir,
        extraDirs: options.extraDirs,
        waitMs: options.waitMs,
        emit: options.emit,
        log,
      });
      outbox = box;
      box.resend();
      socket = createToolSocket({
        path: socketPath,
        handle: (call) => box.request(call, options.target),
        log,
      });
      await socket.start();
    },
    async stop() {
      outbox?.stop();
      await socket?.stop();
    },
    settle(frame) {
      outbox?.settle(frame);
    },
  };
}

/**
 * The agent's MCP config with Switchyard's server added. The agent's servers are kept as they are; one
 * named {@link MCP_SERVER_NAME} is a configuration error (it would silently replace, or be replaced by,
 * the file tools).
 */
export function mergedMcpConfig(userConfig: string | undefined, socketPath: string): { mcpServers: object } {
  let servers: Record<string, unknown> = {};
  if (userConfig !== undefined) {
    if (!existsSync(userConfig)) throw new Error(`the agent's MCP config ${userConfig} does not exist`);
    const parsed = JSON.parse(readFileSync(userConfig, 'utf8')) as { mcpServers?: unknown };
    if (typeof parsed.mcpServers !== 'object' || parsed.mcpServers === null) {
      throw new Error(`the agent's MCP config ${userConfig} has no "mcpServers" object`);
    }
    servers = parsed.mcpServers as Record<string, unknown>;
    if (Object.hasOwn(servers, MCP_SERVER_NAME)) {
      throw new Error(
        `the agent's MCP config ${userConfig} defines a server named "${MCP_SERVER_NAME}", which Switchyard uses for its file tools: rename that server, or set files.enabled: false for this agent`,
      );
    }
  }
  return {
    mcpServers: {
      ...servers,
      [MCP_SERVER_NAME]: {
        type: 'stdio',
        command: process.execPath,
        args: [MCP_MAIN, '--socket', socketPath],
      },
    },
  };
}
