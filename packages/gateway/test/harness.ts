/**
 * Test wiring: the sandbox Telegram server over real HTTP on 127.0.0.1, a gateway pointed at it, and a
 * protocol client playing the bridge with scripted frames. Not a test file itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AppFrame,
  createMemoryChannelStore,
  createProtocolClient,
  type Endpoint,
  type FrameOf,
  type Logger,
  type Route,
} from '@switchyard/protocol';
import {
  createTelegramServer,
  type SandboxMessage,
  type TelegramServer,
  type TelegramServerOptions,
} from '@switchyard/sandbox';
import { onTestFinished } from 'vitest';
import { createGateway, type Gateway, type GatewayOptions } from '../src/index.js';

/** A logger that keeps every line, for assertions on structured events. */
export function memoryLogger(): Logger & {
  lines: { level: string; fields: Record<string, unknown>; msg?: string }[];
} {
  const lines: { level: string; fields: Record<string, unknown>; msg?: string }[] = [];
  const make = (bindings: Record<string, unknown>): Logger => {
    const at =
      (level: string) =>
      (fields: object, msg?: string): void => {
        lines.push({ level, fields: { ...bindings, ...fields }, ...(msg === undefined ? {} : { msg }) });
      };
    return {
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  return Object.assign(make({}), { lines });
}

/** The fake bridge: frames it received, and a way to send. */
export interface FakeBridge {
  endpoint: Endpoint;
  received: AppFrame[];
  send(frame: AppFrame): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Registers a test's cleanup: vitest's global `onTestFinished` by default. A test of a concurrent suite
 * (`describe.concurrent`, for files that mostly wait) passes its context's own, because vitest's global
 * hooks cannot tell two tests running at once apart.
 */
export type Finally = (cleanup: () => Promise<void> | void) => void;

/**
 * Connects a fake bridge to `socketPath`, stopped when the test finishes (before the world it connects
 * to: vitest runs `onTestFinished` callbacks newest first). Safe after a test stopped it itself.
 */
export async function connectBridge(
  socketPath: string,
  agent = 'test',
  options: { refuse?: (frame: AppFrame) => boolean; finished?: Finally } = {},
): Promise<FakeBridge> {
  const received: AppFrame[] = [];
  const endpoint = createProtocolClient({
    socketPath,
    agent,
    store: createMemoryChannelStore(),
    onFrame: (frame) => {
      // A handler that keeps throwing: the channel refuses the frame after its retries.
      if (options.refuse?.(frame)) throw new Error('this bridge cannot take that frame');
      received.push(frame);
    },
    backoff: { initialMs: 20, maxMs: 200 },
    handlerRetryDelaysMs: [10, 10],
  });
  (options.finished ?? onTestFinished)(() => endpoint.stop());
  await endpoint.start();
  await waitUntil(() => endpoint.connected, 5000, 'bridge connected');
  return { endpoint, received, send: (frame) => endpoint.send(frame), stop: () => endpoint.stop() };
}

/** Polls `check` until truthy. */
export async function waitUntil<T>(
  check: () => T | undefined | null | false,
  timeoutMs = 5000,
  what = 'condition',
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** One test world: sandbox, gateway, directories. */
export interface World {
  tg: TelegramServer;
  gateway: Gateway;
  logger: ReturnType<typeof memoryLogger>;
  stateDir: string;
  socketPath: string;
  userId: number;
  options: GatewayOptions;
  restart(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the sandbox and a gateway allowing the sandbox's default user; the world is closed when the
 * test finishes, after the fake bridges connected to it.
 */
export async function startWorld(
  overrides: Partial<GatewayOptions> = {},
  tgOptions: TelegramServerOptions = {},
  finished: Finally = onTestFinished,
): Promise<World> {
  // Time runs ten times faster here than at Telegram: the stand-in's flood limits and the gateway's
  // budget are both scaled by ten, so the budget still stays under the limits, and a test waits 100 ms
  // where a chat would wait a second. Tests about the limits themselves pass their own.
  const tg = createTelegramServer({
    ...tgOptions,
    rateLimits:
      tgOptions.rateLimits === false
        ? false
        : {
            privateChat: { burst: 3, perSecond: 10 },
            groupChat: { burst: 20, perSecond: 200 / 60 },
            global: { burst: 30, perSecond: 300 },
            draft: { burst: 2, perSecond: 20 },
            ...tgOptions.rateLimits,
          },
  });
  await tg.start();
  const dir = mkdtempSync(join(tmpdir(), 'gw-'));
  const stateDir = join(dir, 'state');
  const socketPath = join(dir, 'b.sock');
  const logger = memoryLogger();
  const options: GatewayOptions = {
    agent: 'test',
    token: tg.token,
    apiRoot: tg.apiRoot,
    allowUsers: [tg.defaultUser.id],
    stateDir,
    socketPath,
    logger,
    polling: { timeoutSec: 1, backoff: { initialMs: 50, maxMs: 400 } },
    card: { showDelayMs: 60_000 },
    // The classic path (placeholder, edits, HTML) is what most tests here pin down; the rich path's
    // tests (`rich-reply.test.ts`) pass `replies: 'rich'`.
    replies: 'classic',
    budget: { scale: 0.1, globalPerSecond: 250, penaltyMs: 6000 },
    // The start-up grace, ten times faster too.
    bridgeGraceMs: 300,
    ...overrides,
  };
  /** Closing is once: a test may close a world itself, and the test's end closes it again. */
  let closing: Promise<void> | undefined;
  const world: World = {
    tg,
    gateway: createGateway(options),
    logger,
    stateDir,
    socketPath,
    userId: tg.defaultUser.id,
    options,
    async restart() {
      await world.gateway.stop();
      world.gateway = createGateway(options);
      await world.gateway.start();
    },
    close() {
      closing ??= (async () => {
        await world.gateway.stop().catch(() => {});
        await tg.stop();
        rmSync(dir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
  finished(() => world.close());
  await world.gateway.start();
  return world;
}

/** The fake bridge starts a turn in `route`; by default it answers no message and its request is its id. */
export function startTurn(
  bridge: FakeBridge,
  turn: { turnId: string; route: Route; request?: string; inboundIds?: string[] },
): Promise<void> {
  return bridge.send({
    type: 'turn_started',
    turnId: turn.turnId,
    route: turn.route,
    inboundIds: turn.inboundIds ?? [],
    request: turn.request ?? turn.turnId,
    startedAt: Date.now(),
  });
}

/** The frames of one type the fake bridge received, in order. */
export function framesOf<T extends AppFrame['type']>(
  bridge: FakeBridge,
  type: T,
): Extract<AppFrame, { type: T }>[] {
  return bridge.received.filter((f): f is Extract<AppFrame, { type: T }> => f.type === type);
}

/** The `index`-th frame of `type` the fake bridge received, once it has one. */
export function received<T extends AppFrame['type']>(
  bridge: FakeBridge,
  type: T,
  index = 0,
): Promise<FrameOf<T>> {
  return waitUntil(() => bridge.received.filter((f) => f.type === type)[index] as FrameOf<T> | undefined);
}

/**
 * A world with a connected fake bridge, `command` sent in the user's private chat, and the request of
 * `type` it made the gateway send to the bridge.
 */
export async function commandAsked<T extends AppFrame['type']>(
  command: string,
  type: T,
  overrides: Partial<GatewayOptions> = {},
): Promise<{ world: World; bridge: FakeBridge; tg: TelegramServer; chatId: number; request: FrameOf<T> }> {
  const world = await startWorld(overrides);
  const bridge = await connectBridge(world.socketPath);
  const { tg } = world;
  const chatId = tg.privateChat().id;
  tg.sendText(chatId, command);
  return { world, bridge, tg, chatId, request: await received(bridge, type) };
}

/** Waits for the first bot message in `chatId` whose text passes `match`. */
export function botMessage(
  tg: TelegramServer,
  chatId: number,
  match: (text: string) => boolean,
  timeoutMs = 5000,
): Promise<SandboxMessage> {
  return tg.waitFor(() => tg.messages(chatId).find((m) => m.from === 'bot' && match(m.text)), { timeoutMs });
}

/** The bot's messages in `chatId`, oldest first. */
export function botMessages(tg: TelegramServer, chatId: number): SandboxMessage[] {
  return tg.messages(chatId).filter((m) => m.from === 'bot');
}

/** Resolves after `ms`; for asserting that nothing (more) happens. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The allowed user addresses the bot in `chatId` (and waits until the bridge has the message): the
 * gateway lets the bridge address only chats the agent talked in, so a test that has the fake bridge
 * start a turn or a prompt in a group introduces the group first.
 */
export async function introduce(world: World, bridge: FakeBridge, chatId: number): Promise<void> {
  const before = framesOf(bridge, 'user_message').length;
  world.tg.sendText(chatId, '@switchyard_sandbox_bot hello');
  await waitUntil(() => framesOf(bridge, 'user_message').length > before);
}
