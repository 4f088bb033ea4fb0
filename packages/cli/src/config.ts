/**
 * The host's config file: which agents run here and how. It is the only place Switchyard reads
 * settings from; the cli turns it into typed options for the gateway and bridge factories.
 *
 * Resolution of the file: `--config PATH`, else `$SWITCHYARD_CONFIG`, else `./switchyard.yaml`.
 * A bad file is refused before anything starts, with every problem listed by its path.
 *
 * This file finds, reads and validates the file; its shape is `config-schema.ts`, an agent's resolved
 * settings `agent-config.ts`, the token's sources `bot-token.ts`, the masked view `masked-config.ts`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_ALLOWED_MODES } from '@switchyard/protocol';
import { LineCounter, parseDocument } from 'yaml';
import { type Config, type ConfigEnvironment, resolveAgent } from './agent-config.js';
import { ConfigError } from './config-error.js';
import { configIssueMessage, describeYamlError, dropUnknownKeys } from './config-messages.js';
import { fileSchema } from './config-schema.js';
import { remoteBridgeProblems } from './remote-bridge-config.js';

/** Where the config file is, by the documented order of precedence. */
export function resolveConfigPath(flag: string | undefined, { env, cwd }: ConfigEnvironment): string {
  // An empty $SWITCHYARD_CONFIG counts as unset (as from a unit's `Environment=SWITCHYARD_CONFIG=`).
  return path.resolve(cwd, flag ?? (env.SWITCHYARD_CONFIG || 'switchyard.yaml'));
}

/** Reads, parses and validates a config file. Throws `ConfigError` listing every problem. */
export function loadConfig(file: string, environment: ConfigEnvironment): Config {
  return parseConfig(readConfigText(file), file, environment);
}

/**
 * Reads and validates a config file without refusing it: every problem, and the config when its
 * problems do not keep it from being used for further checks (unknown keys only), so `config check`
 * can go on to the host. Throws `ConfigError` only when the file cannot be read.
 */
export function checkConfigFile(file: string, environment: ConfigEnvironment): ConfigValidation {
  return validateConfig(readConfigText(file), file, environment);
}

function readConfigText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const hint =
      code === 'ENOENT'
        ? 'no such file: copy deploy/switchyard.example.yaml there, or pass --config PATH'
        : code === 'EISDIR'
          ? 'is a directory: pass the config file itself (--config PATH/switchyard.yaml)'
          : String(err);
    throw new ConfigError(file, [hint]);
  }
}

/** Parses and validates config text (YAML). `file` is used for messages and to resolve relative paths. */
export function parseConfig(text: string, file: string, environment: ConfigEnvironment): Config {
  const { config, problems } = validateConfig(text, file, environment);
  if (config === undefined || problems.length > 0) throw new ConfigError(file, problems);
  return config;
}

/**
 * Every problem of config text, and the config as it would be used when the only problems are
 * unknown keys (which are dropped for it). A config with problems is never started; it is returned
 * so that what it points at can still be checked.
 */
export interface ConfigValidation {
  config: Config | undefined;
  problems: string[];
}

/** `agents[i].name: "x" is used by another agent` for each repeated name of the raw file, whatever else is wrong. */
function duplicateNames(data: unknown): string[] {
  const agents = (data as { agents?: unknown } | null)?.agents;
  if (!Array.isArray(agents)) return [];
  const names = new Set<string>();
  const problems: string[] = [];
  agents.forEach((agent: unknown, i) => {
    const name = (agent as { name?: unknown } | null)?.name;
    if (typeof name !== 'string') return;
    if (names.has(name)) problems.push(`agents[${i}].name: "${name}" is used by another agent`);
    names.add(name);
  });
  return problems;
}

/** Validates config text; see {@link ConfigValidation}. */
export function validateConfig(text: string, file: string, environment: ConfigEnvironment): ConfigValidation {
  const lines = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true, lineCounter: lines });
  if (doc.errors.length > 0) {
    return { config: undefined, problems: doc.errors.map((e) => describeYamlError(e, doc, lines)) };
  }
  const data: unknown = doc.toJS();
  // Named before the schema's verdict: a duplicate is as wrong as any other mistake, and reported with them.
  const schemaProblems: string[] = duplicateNames(data);
  let result = fileSchema.safeParse(data, { error: configIssueMessage });
  if (!result.success) {
    const { issues } = result.error;
    schemaProblems.push(
      ...issues.map((issue) =>
        issue.path.length === 0 ? issue.message : `${formatPath(issue.path)}: ${issue.message}`,
      ),
    );
    if (issues.every((issue) => issue.code === 'unrecognized_keys')) {
      dropUnknownKeys(data, issues);
      result = fileSchema.safeParse(data, { error: configIssueMessage });
    }
    if (!result.success) return { config: undefined, problems: schemaProblems };
  }
  const problems: string[] = [...schemaProblems];
  result.data.agents.forEach((agent, i) => {
    (agent.operators ?? []).forEach((id, j) => {
      if (!agent.allow.includes(id)) {
        problems.push(
          `agents[${i}].operators[${j}]: user ${id} is not in allow; an operator must be allowed`,
        );
      }
    });
    const mode = agent.claude?.permissionMode;
    const allowed: readonly string[] = agent.allowedModes ?? DEFAULT_ALLOWED_MODES;
    if (mode !== undefined && !allowed.includes(mode)) {
      problems.push(
        `agents[${i}].claude.permissionMode: ${mode} is not in allowedModes (${allowed.join(', ')}); add it there to allow it`,
      );
    }
    const places = new Set<string>();
    (agent.chats ?? []).forEach((chat, j) => {
      const place = `${chat.chat}:${chat.topic ?? ''}`;
      if (places.has(place)) {
        problems.push(
          `agents[${i}].chats[${j}]: chat ${chat.chat}${chat.topic ? ` topic ${chat.topic}` : ''} is listed twice`,
        );
      }
      places.add(place);
      const allowed: readonly string[] = agent.allowedModes ?? DEFAULT_ALLOWED_MODES;
      if (chat.permissionMode !== undefined && !allowed.includes(chat.permissionMode)) {
        problems.push(
          `agents[${i}].chats[${j}].permissionMode: ${chat.permissionMode} is not in allowedModes (${allowed.join(', ')}); add it there to allow it`,
        );
      }
      if (chat.topic !== undefined && chat.listen !== undefined) {
        problems.push(`agents[${i}].chats[${j}].listen: set listen on the chat's own entry (without topic)`);
      }
    });
  });
  const base = path.dirname(file);
  const agents = result.data.agents.map((agent) => resolveAgent(agent, base, environment));
  agents.forEach((agent, i) => {
    const bytes = Buffer.byteLength(agent.socketPath);
    if (bytes > 107) {
      problems.push(
        `agents[${i}].runtimeDir: the socket path ${agent.socketPath} is ${bytes} bytes, over the 107-byte limit; choose a shorter runtimeDir`,
      );
    }
    problems.push(...remoteBridgeProblems(agent, i));
  });
  return { config: { file, agents }, problems };
}

/** Formats a zod issue path the way people read it: `agents[0].allow[2]`. */
export function formatPath(parts: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(file)' : out;
}
