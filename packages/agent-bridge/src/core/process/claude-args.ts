/**
 * The Claude CLI's command line as the bridge starts it: the flags every start has, then what varies from
 * one start to the next (the session to resume, model, mode, the MCP config, the system-prompt text, the
 * operator's extra arguments). The benchmark starts its bare CLI with the same list, so that what it
 * measures is Switchyard and not a difference of flags.
 */
import { UNTRUSTED_INPUT_RULE } from '@switchyard/protocol/common';

/**
 * The flags the bridge always starts the CLI with (DESIGN.md, "The Claude process"): stream-json both
 * ways, partial messages for live text, permission prompts as control requests on stdio, and each user
 * message echoed when a turn takes it (`--replay-user-messages`: the proof a steer was read, see
 * `session.ts`).
 */
export const CLAUDE_STREAM_ARGS = [
  '-p',
  '--verbose',
  '--input-format',
  'stream-json',
  '--output-format',
  'stream-json',
  '--include-partial-messages',
  '--permission-prompt-tool',
  'stdio',
  '--replay-user-messages',
] as const;

/** What varies in the CLI's command line from one start to the next. */
export interface ClaudeArgsOptions {
  /** The session to resume (`--resume`), if the conversation has one. */
  resume?: string | undefined;
  model?: string | undefined;
  permissionMode?: string | undefined;
  /** The settings files the CLI reads (`--setting-sources`, e.g. `user,project`); all when unset. */
  settingSources?: string | undefined;
  /** Path of an MCP config file (`--mcp-config`). */
  mcpConfig?: string | undefined;

  /** Appended last, as given. */
  extra?: readonly string[] | undefined;
}

/**
 * The CLI's full argument list: {@link CLAUDE_STREAM_ARGS}, then the options that are set, then the
 * bridge's system-prompt rules (`--append-system-prompt`: what an untrusted block is, see
 * `@switchyard/protocol`'s `UNTRUSTED_INPUT_RULE`), then the operator's extra arguments.
 */
export function claudeArgs(options: ClaudeArgsOptions): string[] {
  const args: string[] = [...CLAUDE_STREAM_ARGS];
  if (options.resume) args.push('--resume', options.resume);
  if (options.model) args.push('--model', options.model);
  if (options.permissionMode) args.push('--permission-mode', options.permissionMode);
  if (options.settingSources) args.push('--setting-sources', options.settingSources);
  if (options.mcpConfig) args.push('--mcp-config', options.mcpConfig);
  // Every process knows what an untrusted block is: any conversation may be given one.
  args.push('--append-system-prompt', UNTRUSTED_INPUT_RULE);
  args.push(...(options.extra ?? []));
  return args;
}
