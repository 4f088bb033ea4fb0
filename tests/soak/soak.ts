/**
 * The soak: five conversations (three private chats, two forum topics) send a steady stream of messages
 * while random faults hit the services, Telegram, the model and the CLI; then the faults stop, everything
 * settles, and the invariant checker judges the whole run. Run by `soak.test.ts` (see the root README,
 * "Reliability", for the command and its duration variable).
 */
import { overloaded, rateLimited } from '@switchyard/sandbox';
import { type Conversation, type FaultWorld, startWorld } from '../faults/harness.js';
import type { Tally, Violation } from '../faults/invariants.js';

/** How long and how much. */
export interface SoakOptions {
  durationMs: number;
  /** Messages sent in all, spread evenly over the duration. */
  messages: number;
  /** Seeds the fault choice, so a failing run can be repeated. */
  seed: number;
}

/** What a soak found. */
export interface SoakResult {
  tally: Tally;
  faults: number;
  byKind: Record<string, number>;
  violations: Violation[];
  /** The one line the soak prints. */
  line: string;
  /**
   * When the verdict found a violation: the file holding what it needs to be understood (every
   * conversation's bot messages, the Bot API calls, the services' logs, and the faults with their times).
   */
  evidence?: string;
}

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs one soak; resolves when the system has settled and been judged and stopped. */
export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const next = random(options.seed);
  const deck = faultDeck(next);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const world = await startWorld({
    privateChats: 3,
    topics: 2,
    forumPerTopic: true,
    card: { showDelayMs: 2_000 },
  });
  const byKind: Record<string, number> = {};
  /** Each fault as it was injected, with its time and target, for the evidence file. */
  const injected: string[] = [];
  const count = (kind: string, target: string) => {
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    injected.push(`${new Date().toISOString()} ${kind} (${target})`);
  };
  try {
    const deadline = Date.now() + options.durationMs;
    const senders = sendSteadily(world, options, pick);
    // Faults until the deadline and until every kind has come once: on a loaded machine a restart takes
    // longer and twelve draws may not fit in the duration (a run dealt ten), so the last kinds come while
    // the final messages are still in flight, within a minute past the deadline at most.
    const missing = () => SOAK_FAULTS.some((kind) => !byKind[kind]);
    while (Date.now() < deadline - 5_000 || (missing() && Date.now() < deadline + 60_000)) {
      await pause(3_000 + next() * 6_000);
      await injectOne(world, pick, deck, count);
    }
    await senders;
    world.system.telegram.clearFaults();
    await world.settled(240_000);
    const { tally, violations } = world.verdict();
    const faults = Object.values(byKind).reduce((a, b) => a + b, 0);
    const line =
      `soak ${Math.round(options.durationMs / 1000)} s: messages sent ${tally.sent}, answered once ${tally.answeredOnce}, ` +
      `lost ${tally.lost}, duplicated ${tally.duplicated}, stray placeholders ${tally.strayPlaceholders}, ` +
      `faults injected ${faults}`;
    const evidence = violations.length > 0 ? world.dump('soak', ['== faults', ...injected]) : undefined;
    return { tally, faults, byKind, violations, line, ...(evidence ? { evidence } : {}) };
  } finally {
    await world.stop();
  }
}

/**
 * Sends `options.messages` questions at random over the conversations, evenly in time. A group may get
 * 20 bot messages a minute from Telegram and each answer costs a placeholder and its final edit, so the
 * topics get one message in fourteen each; the private chats (one a second) take the rest.
 */
async function sendSteadily(
  world: FaultWorld,
  options: SoakOptions,
  pick: <T>(items: readonly T[]) => T,
): Promise<void> {
  const every = (options.durationMs - 10_000) / options.messages;
  const weighted = world.conversations.flatMap((c) =>
    Array.from({ length: c.threadId === undefined ? 4 : 1 }, () => c),
  );
  for (let i = 0; i < options.messages; i++) {
    pick(weighted).ask();
    await pause(every);
  }
}

/** Every kind of fault the soak injects. */
export const SOAK_FAULTS = [
  'bridge SIGKILL',
  'bridge SIGTERM',
  'gateway SIGKILL',
  'gateway SIGTERM',
  'sendMessage answer lost',
  'editMessageText answer lost',
  'Telegram 5xx 5 s',
  '429 storm 5 s',
  'getUpdates stalled 5 s',
  'Messages API 529',
  'Messages API 429',
  'CLI killed idle',
] as const;
type SoakFault = (typeof SOAK_FAULTS)[number];

/**
 * The kinds drawn as cards from a shuffled deck, reshuffled when it is empty: every kind comes once in
 * each run of {@link SOAK_FAULTS}`.length` draws, where a plain random pick left one or two kinds out of a
 * two-minute soak about half the time. A kind that could not be injected when drawn goes under the deck,
 * to be drawn again once the rest have been.
 */
function faultDeck(next: () => number): { draw(): SoakFault; putBack(kind: SoakFault): void } {
  let cards: SoakFault[] = [];
  return {
    draw() {
      if (cards.length === 0) {
        cards = [...SOAK_FAULTS];
        for (let i = cards.length - 1; i > 0; i--) {
          const j = Math.floor(next() * (i + 1));
          [cards[i], cards[j]] = [cards[j] as SoakFault, cards[i] as SoakFault];
        }
      }
      return cards.pop() as SoakFault;
    },
    putBack(kind) {
      cards.unshift(kind);
    },
  };
}

/** One fault, the next of the deck; waits for services it stopped to be started again. */
async function injectOne(
  world: FaultWorld,
  pick: <T>(items: readonly T[]) => T,
  deck: ReturnType<typeof faultDeck>,
  count: (kind: string, target: string) => void,
): Promise<void> {
  const { system } = world;
  const { telegram } = system;
  const c: Conversation = pick(world.conversations);
  const kind = deck.draw();
  switch (kind) {
    case 'bridge SIGKILL':
    case 'bridge SIGTERM':
    case 'gateway SIGKILL':
    case 'gateway SIGTERM': {
      const [service, signal] = kind.split(' ') as ['bridge' | 'gateway', NodeJS.Signals];
      await system.kill(service, signal);
      await pause(500);
      system.start(service);
      break;
    }
    case 'sendMessage answer lost':
      telegram.dropNext('sendMessage', { chatId: c.chatId });
      break;
    case 'editMessageText answer lost':
      telegram.dropNext('editMessageText', { chatId: c.chatId });
      break;
    case 'Telegram 5xx 5 s':
      telegram.failFor('*', { errorCode: 502, description: 'Bad Gateway' }, 5_000, { chatId: c.chatId });
      break;
    case '429 storm 5 s':
      telegram.failFor(
        '*',
        { errorCode: 429, description: 'Too Many Requests: retry after 1', retryAfter: 1 },
        5_000,
        { chatId: c.chatId },
      );
      break;
    case 'getUpdates stalled 5 s':
      telegram.stallUpdates(5_000);
      break;
    case 'Messages API 529':
      world.script(world.nextToken(c), { before: [overloaded(1)], long: false });
      break;
    case 'Messages API 429':
      world.script(world.nextToken(c), { before: [rateLimited(1, 1)], long: false });
      break;
    case 'CLI killed idle': {
      // Only between turns (every message answered), so no turn is cut short and every check stays strict:
      // the first conversation that is idle with a live CLI, whichever was picked.
      const idle = (x: Conversation) =>
        x.sent.every((t) =>
          telegram.messages(x.chatId).some((m) => m.from === 'bot' && m.text.includes(world.finalText(t))),
        );
      const idlePid = () =>
        world.conversations
          .filter(idle)
          .map((x) => system.claudePid(x.chatId, x.threadId))
          .find((p) => p !== undefined);
      // Under the steady stream a conversation is idle only now and then: look for one for a while.
      let pid = idlePid();
      for (const until = Date.now() + 10_000; pid === undefined && Date.now() < until; pid = idlePid())
        await pause(250);
      if (pid === undefined) {
        deck.putBack(kind);
        return;
      }
      process.kill(pid, 'SIGKILL');
      count(kind, `pid ${pid}`);
      return;
    }
  }
  count(kind, kind.startsWith('Messages API') ? world.nextToken(c) : c.name);
}
