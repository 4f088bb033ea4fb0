/**
 * The file tools as one piece the bridge starts and stops per Claude session: the MCP config that adds
 * Switchyard's server (an HTTP endpoint the bridge serves itself, `io/mcp/endpoint.ts`) to the agent's own
 * servers, the command-line flags that let its tools run without a permission prompt, and the file
 * outbox behind it.
 *
 * When no prompt: the tools only send to the conversation the user is already in, from the directories
 * the operator allowed, so in a private chat they run unasked (`--allowedTools` names just these three;
 * every other tool keeps its prompts). In a group the people reading along need not be on the allowlist,
 * and whether they are cannot be told (the Bot API lists administrators and a member count, not the
 * members): there each send is a permission prompt with buttons, answered by an allowed user, before
 * anything leaves the working directory ({@link confirmsFileSends}; per chat `confirmFileSends`).
 *
 * Layout in the session's state directory: `mcp.json` (the merged config, rewritten at each start, 0600:
 * it holds the endpoint's port and this conversation's secret, which a restarted bridge reads back so
 * the `claude` still running finds it again), and `files/` (the outbox's index, see `file-outbox.ts`);
 * the copies to send are made in the agent's exchange directory, which the gateway can read.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock, ExchangeOptions, FrameOf, Logger, TransferPeer } from '@switchyard/protocol';
import { writeFileAtomic } from '../outbox/atomic-file.js';
import { createMcpEndpoint, MCP_PATH, type McpEndpoint } from './endpoint.js';
import { createFileCarrier } from './file-carrier.js';
import { FileOutbox, type FileTarget } from './file-outbox.js';
import { SCHEDULE_TOOL_NAMES, type ScheduleAsker } from './schedule-tools.js';
import { FILE_TOOL_NAMES, MCP_SERVER_NAME } from './server.js';

/** The agent's `files` settings. */
export interface FilesConfig {
  /** Offer the tools (default true). Off: no server, no flags; the agent's own MCP config is used as is. */
  enabled?: boolean | undefined;
  /** Directories besides the working directory whose files may be sent. */
  extraDirs?: readonly string[] | undefined;
  /** How long a tool call waits for Telegram before it answers "queued" (default 60 s). */
  waitMs?: number | undefined;
  /** How long `claude` waits before reconnecting a call the bridge broke off (default 3 s; two tries). */
  retryMs?: number | undefined;
  /** The schedule tools' way to the gateway (the bridge's); absent: they answer that schedules are off. */
  schedules?: ScheduleAsker | undefined;
  /**
   * The way files reach a gateway on another host (the bridge's transfers, `file-carrier.ts`); absent:
   * the gateway reads them from the shared exchange directory.
   */
  transfers?: Pick<TransferPeer, 'put'> | undefined;
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
  /** Time for the outbox's stamps and waits (the conversation's clock). */
  clock?: Clock | undefined;
  log: Logger;
}

/** The file tools' handle. */
export interface FileTools {
  /** The `--mcp-config` to start the CLI with (the merged file, or the agent's own when disabled). */
  readonly mcpConfig: string | undefined;
  /** Flags to add to the CLI's command line. */
  readonly claudeArgs: readonly string[];
  /** The environment to start the CLI with: `env`, plus what the endpoint needs (see {@link withLoopbackNoProxy}). */
  claudeEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /** Listens, writes the merged config, re-sends unsettled files. Throws on a server-name clash. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The gateway's `file_sent`. */
  settle(frame: FrameOf<'file_sent'>): void;
}

/** Where Switchyard's MCP endpoint of one conversation is, as its `mcp.json` tells `claude`. */
export interface McpEndpointAddress {
  port: number;
  secret: string;
}

/** Builds the file tools; nothing is written or listened on until `start()`. */
export function createFileTools(options: FileToolsOptions): FileTools {
  const enabled = options.enabled ?? true;
  if (!enabled) {
    return {
      mcpConfig: options.userMcpConfig,
      claudeArgs: [],
      claudeEnv: (env) => env,
      start: async () => {},
      stop: async () => {},
      settle: () => {},
    };
  }
  const log = options.log.child({ component: 'files' });
  const configPath = join(options.stateDir, 'mcp.json');
  let outbox: FileOutbox | undefined;
  let endpoint: McpEndpoint | undefined;
  return {
    mcpConfig: configPath,
    // The schedule tools act only on this conversation's schedules and send nothing anywhere: allowed
    // outright, even where file sends ask first.
    claudeArgs: [
      '--allowedTools',
      (options.confirmSends ? SCHEDULE_TOOL_NAMES : [...FILE_TOOL_NAMES, ...SCHEDULE_TOOL_NAMES]).join(','),
    ],
    claudeEnv: withLoopbackNoProxy,
    async start() {
      const box = new FileOutbox({
        dir: join(options.stateDir, 'files'),
        exchange: options.exchange,
        workDir: options.workDir,
        extraDirs: options.extraDirs,
        waitMs: options.waitMs,
        emit: options.transfers
          ? createFileCarrier({
              transfers: options.transfers,
              emit: options.emit,
              settle: (frame) => outbox?.settle(frame),
              log,
            })
          : options.emit,
        clock: options.clock,
        log,
      });
      outbox = box;
      const previous = previousEndpoint(configPath);
      const secret = previous?.secret ?? randomBytes(32).toString('base64url');
      // Checked before anything listens: a clash is a configuration error.
      mergedMcpConfig(options.userMcpConfig, { port: previous?.port ?? 0, secret });
      endpoint = createMcpEndpoint({
        port: previous?.port,
        secret,
        call: (key, call) => box.request({ id: key, ...call }, options.target),
        rejoin: (key) => box.rejoin(key),
        schedule: async (call) => {
          const target = options.target();
          if (!options.schedules || !target)
            return { ok: false, text: 'schedules are not available in this conversation' };
          return options.schedules.ask(target.route, call);
        },
        retryMs: options.retryMs,
        version: '0.1.0',
        log,
      });
      const port = await endpoint.start();
      writeFileAtomic(
        configPath,
        JSON.stringify(mergedMcpConfig(options.userMcpConfig, { port, secret }), null, 2),
      );
      box.resend();
    },
    async stop() {
      outbox?.stop();
      await endpoint?.stop();
    },
    settle(frame) {
      outbox?.settle(frame);
    },
  };
}

const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy'];

/**
 * `env` with 127.0.0.1 and localhost in `NO_PROXY`/`no_proxy` when it names a proxy: the CLI sends
 * loopback requests through a configured proxy too, which would carry the MCP endpoint's calls (and its
 * secret) to the proxy's host instead of this one.
 */
export function withLoopbackNoProxy(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (!PROXY_VARIABLES.some((name) => env[name])) return env;
  const listed = (env.NO_PROXY ?? env.no_proxy ?? '')
    .split(',')
    .map((host) => host.trim())
    .filter(Boolean);
  const noProxy = [...new Set([...listed, '127.0.0.1', 'localhost'])].join(',');
  return { ...env, NO_PROXY: noProxy, no_proxy: noProxy };
}

/** The port and secret in a conversation's previous `mcp.json`, if it has a readable one. */
export function previousEndpoint(configPath: string): McpEndpointAddress | undefined {
  try {
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as {
      mcpServers?: Record<string, { url?: unknown; headers?: Record<string, unknown> }>;
    };
    const entry = config.mcpServers?.[MCP_SERVER_NAME];
    const port = typeof entry?.url === 'string' ? Number(new URL(entry.url).port) : Number.NaN;
    const auth = entry?.headers?.Authorization;
    const secret = typeof auth === 'string' && auth.startsWith('Bearer ') ? auth.slice(7) : '';
    return Number.isInteger(port) && port > 0 && secret.length >= 32 ? { port, secret } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The agent's MCP config with Switchyard's server added. The agent's servers are kept as they are; one
 * named {@link MCP_SERVER_NAME} is a configuration error (it would silently replace, or be replaced by,
 * the file tools).
 */
export function mergedMcpConfig(
  userConfig: string | undefined,
  endpoint: McpEndpointAddress,
): { mcpServers: object } {
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
        type: 'http',
        url: `http://127.0.0.1:${endpoint.port}${MCP_PATH}`,
        headers: { Authorization: `Bearer ${endpoint.secret}` },
      },
    },
  };
}
