/**
 * An agent's `webhooks:` and `budget:` keys: the webhook receiver and the daily cost budgets, whose day
 * is counted in the agent's `timezone:` (a key of schedule-config.ts).
 *
 * ```yaml
 * timezone: Europe/Berlin                      # the agent's; UTC when absent
 * budget: { dailyUsd: 20, perUserDailyUsd: 5 }  # either or both
 *   # optional: turnEstimateUsd (a running turn's reservation), transcriptionUsdPerMinute (default 0.006)
 * webhooks:
 *   listen: { host: 127.0.0.1, port: 8790 }    # a host beyond loopback needs public: true
 *   # forwardedFor: true                       # behind a proxy that sets X-Forwarded-For: its last entry
 *   #                                          # is the address bad signatures are counted against
 *   # maxConnections: 64                       # connections open at once
 *   hooks:
 *     - name: github
 *       kind: github                           # or generic: X-Signature-256 over "<timestamp>.<body>",
 *                                              # X-Signature-Timestamp (Unix s, ±5 min), X-Delivery-Id
 *       secret: { env: GITHUB_WEBHOOK_SECRET } # the bot token's forms
 *       chat: -1001234567890
 *       topic: 42                              # optional
 *       events: [workflow_run, pull_request]   # required for kind github: the events it delivers
 *       maxBodyBytes: 1048576                  # optional
 *       rate: { perMinute: 30, burst: 10 }     # optional
 * ```
 *
 * Validated here with messages that say what to change; resolved with secrets still sources, and read
 * into the gateway's options by {@link webhookOptions} when the gateway starts.
 */
import path from 'node:path';
import type { GatewayOptions } from '@switchyard/gateway';
import { z } from 'zod';
import { keySource, LOOPBACK, readKey, type VoiceKeySource } from './voice-config.js';

/** The `budget:` key. */
export const budgetSchema = z
  .strictObject({
    dailyUsd: z.number().positive({ error: 'expected a positive amount in USD' }).optional(),
    perUserDailyUsd: z.number().positive({ error: 'expected a positive amount in USD' }).optional(),
    /** What a running turn is reserved at; default the mean of the last turns' costs. */
    turnEstimateUsd: z.number().positive({ error: 'expected a positive amount in USD' }).optional(),
    /** What a minute of voice transcription costs; default $0.006. 0 for a local transcriber. */
    transcriptionUsdPerMinute: z
      .number()
      .nonnegative({ error: 'expected an amount in USD, 0 or more' })
      .optional(),
  })
  .refine((b) => b.dailyUsd !== undefined || b.perUserDailyUsd !== undefined, {
    error: 'give dailyUsd, perUserDailyUsd or both (or remove budget:)',
  });

/**
 * Said of a GitHub hook without `events:`. Every event a hook takes lets a stranger's text (a title, a
 * branch name, a comment) reach the agent, so the operator lists them; none is taken by default.
 */
export const EVENTS_REQUIRED =
  'list the GitHub events this hook delivers, e.g. events: [workflow_run, pull_request] ' +
  '(no event is delivered by default: each one lets text from outside reach the agent)';

const hookSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, {
    error: 'expected a hook name: 1-40 lowercase letters, digits, "-" or "_" (it is the path /hooks/NAME)',
  }),
  kind: z.enum(['github', 'generic'], { error: 'expected github or generic' }),
  secret: keySource,
  chat: z.number({ error: 'expected a Telegram chat id (integer)' }).int(),
  topic: z.number({ error: 'expected a forum topic id (integer)' }).int().positive().optional(),
  events: z
    .array(z.string().regex(/^[a-z_]+$/, { error: 'expected a GitHub event name like workflow_run' }))
    .min(1, { error: EVENTS_REQUIRED })
    .optional(),
  maxBodyBytes: z.number().int().positive().optional(),
  rate: z.strictObject({ perMinute: z.number().positive(), burst: z.number().int().min(1) }).optional(),
});

/** The `webhooks:` key. */
export const webhooksSchema = z
  .strictObject({
    listen: z.strictObject({
      host: z.string().min(1).optional(),
      port: z.number().int().min(1).max(65535),
      /** Says that a host beyond loopback is meant: the receiver is then reachable from the network. */
      public: z.boolean().optional(),
      /** A request's address is the last `X-Forwarded-For` entry (set by the proxy in front). */
      forwardedFor: z.boolean().optional(),
      /** Connections open at once (default 64). */
      maxConnections: z.number().int().min(1).max(10_000).optional(),
    }),
    hooks: z.array(hookSchema).min(1, { error: 'list at least one hook' }),
  })
  .superRefine((webhooks, ctx) => {
    const host = webhooks.listen.host ?? '127.0.0.1';
    if (!LOOPBACK.test(host) && webhooks.listen.public !== true) {
      ctx.addIssue({
        code: 'custom',
        path: ['listen', 'host'],
        message: `${host} is reachable beyond this machine: put a TLS proxy in front and listen on 127.0.0.1, or add public: true if this is meant`,
      });
    }
    const names = new Set<string>();
    webhooks.hooks.forEach((hook, i) => {
      if (names.has(hook.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['hooks', i, 'name'],
          message: `"${hook.name}" is used by another hook`,
        });
      }
      names.add(hook.name);
      if (hook.kind === 'github' && hook.events === undefined) {
        ctx.addIssue({ code: 'custom', path: ['hooks', i, 'events'], message: EVENTS_REQUIRED });
      }
      if (hook.kind !== 'github' && hook.events !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['hooks', i, 'events'],
          message: 'events: is for kind: github only',
        });
      }
    });
  });

/** One hook, resolved; the secret is still a source. */
export interface HookConfig {
  name: string;
  kind: 'github' | 'generic';
  secret: VoiceKeySource;
  route: { chatId: number; threadId?: number };
  events: string[] | undefined;
  maxBodyBytes: number | undefined;
  rate: { perMinute: number; burst: number } | undefined;
}

/** The `webhooks:` block, resolved. */
export interface WebhooksConfig {
  listen: { host: string; port: number; public: boolean; forwardedFor: boolean; maxConnections?: number };
  hooks: HookConfig[];
}

/** Resolves a validated `webhooks:` block; relative secret files are taken from `base`. */
export function resolveWebhooks(
  raw: z.infer<typeof webhooksSchema> | undefined,
  base: string,
): WebhooksConfig | undefined {
  if (raw === undefined) return undefined;
  return {
    listen: {
      host: raw.listen.host ?? '127.0.0.1',
      port: raw.listen.port,
      public: raw.listen.public ?? false,
      forwardedFor: raw.listen.forwardedFor ?? false,
      ...(raw.listen.maxConnections !== undefined ? { maxConnections: raw.listen.maxConnections } : {}),
    },
    hooks: raw.hooks.map((hook) => ({
      name: hook.name,
      kind: hook.kind,
      secret:
        typeof hook.secret === 'string'
          ? { kind: 'inline', value: hook.secret }
          : 'file' in hook.secret
            ? { kind: 'file', path: path.resolve(base, hook.secret.file) }
            : 'env' in hook.secret
              ? { kind: 'env', name: hook.secret.env }
              : { kind: 'credential', name: hook.secret.credential },
      route: hook.topic === undefined ? { chatId: hook.chat } : { chatId: hook.chat, threadId: hook.topic },
      events: hook.events,
      maxBodyBytes: hook.maxBodyBytes,
      rate: hook.rate,
    })),
  };
}

/**
 * The gateway's webhook options, every secret read from its source; a problem names the hook and the
 * source, never the secret.
 */
export function webhookOptions(
  webhooks: WebhooksConfig | undefined,
  env: Record<string, string | undefined>,
): { ok: true; options: GatewayOptions['webhooks'] } | { ok: false; problem: string } {
  if (webhooks === undefined) return { ok: true, options: undefined };
  const hooks: NonNullable<GatewayOptions['webhooks']>['hooks'][number][] = [];
  for (const [i, hook] of webhooks.hooks.entries()) {
    const secret = readKey(hook.secret, env);
    if (!secret.ok) return { ok: false, problem: `webhooks.hooks[${i}].secret: ${secret.problem}` };
    if (secret.value === undefined) return { ok: false, problem: `webhooks.hooks[${i}].secret is missing` };
    hooks.push({
      name: hook.name,
      kind: hook.kind,
      secret: secret.value,
      route: hook.route,
      ...(hook.events ? { events: hook.events } : {}),
      ...(hook.maxBodyBytes !== undefined ? { maxBodyBytes: hook.maxBodyBytes } : {}),
      ...(hook.rate ? { rate: hook.rate } : {}),
    });
  }
  const { host, port, forwardedFor, maxConnections } = webhooks.listen;
  const limits = { forwardedFor, ...(maxConnections !== undefined ? { maxConnections } : {}) };
  return { ok: true, options: { listen: { host, port }, hooks, limits } };
}

/** The block as `config check` shows it: inline secrets masked, sources named. */
export function describeWebhooks(webhooks: WebhooksConfig | undefined): unknown {
  if (webhooks === undefined) return '(none)';
  return {
    ...webhooks,
    hooks: webhooks.hooks.map((hook) => ({
      ...hook,
      secret:
        hook.secret.kind === 'inline'
          ? '***'
          : hook.secret.kind === 'file'
            ? `(from file ${hook.secret.path})`
            : hook.secret.kind === 'env'
              ? `(from environment variable ${hook.secret.name})`
              : `(from systemd credential ${hook.secret.name})`,
    })),
  };
}
