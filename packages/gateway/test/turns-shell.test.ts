/**
 * The turn machine's shell (`io/turns/turns.ts`) over recording fakes: a step's store writes are one
 * transaction made before any Telegram call of that step, and a step the store refused is undone, so the
 * frame the bridge sends again (it was not acknowledged) is applied as if for the first time.
 */
import { ManualClock, silentLogger } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import type { CardDriver } from '../src/io/card/card-driver.js';
import type { Courier } from '../src/io/telegram/courier.js';
import type { SendJournal } from '../src/io/telegram/send-journal.js';
import { createTurns, type TurnsOptions } from '../src/io/turns/turns.js';
import type { GatewayStore, InboundRow } from '../src/store/store.js';

/** Today's budget admitted every message of these tests. */
const ADMITTED = { admit: true } as const;
const route = { chatId: -500 };

/** Fakes that write what they are asked, in order, into one log. */
function world(refuse: { writes: boolean } = { writes: false }, extra: Partial<TurnsOptions> = {}) {
  const log: string[] = [];
  const row: InboundRow = {
    inboundId: 'in-1',
    route,
    telegramMessageId: 9,
    frame: {} as InboundRow['frame'],
    seq: 1,
    state: 'sent',
    placeholderId: undefined,
    placeholderKind: undefined,
    placeholderDue: undefined,
  };
  const store = new Proxy(
    {
      atomically<T>(fn: () => T): T {
        log.push('begin');
        if (refuse.writes) throw new Error('the disk is full');
        const result = fn();
        log.push('commit');
        return result;
      },
      getInbound: () => undefined,
      getTurn: () => undefined,
      upsertTurn: (t: { turnId: string }) => {
        log.push('upsertTurn');
        return { ...t, state: 'running', blocks: [], messageIds: [] };
      },
      duePlaceholders: () => [],
      unfinishedTurns: () => [],
      openCards: () => [],
    },
    {
      get: (target, name: string) =>
        name in target ? target[name as keyof typeof target] : () => log.push(String(name)),
    },
  ) as unknown as GatewayStore;
  const api = new Proxy(
    {},
    {
      get: (_t, name: string) => async () => {
        log.push(`api.${name}`);
        return { message_id: 77 };
      },
    },
  ) as TurnsOptions['api'];
  const courier = { call: (_chat: number, run: () => Promise<unknown>) => run() } as unknown as Courier;
  const journal = {
    send: async (_c: number, _t: string, _o: unknown, owned?: { adopt(id: number): void }) => {
      log.push('api.sendMessage');
      store.atomically(() => owned?.adopt(55));
      return { message_id: 55 };
    },
  } as unknown as Pick<SendJournal, 'send' | 'sendRich'>;
  const cards = { frame: () => log.push('card'), adopt: () => {} } as unknown as CardDriver;
  const turns = createTurns({
    api,
    journal,
    courier,
    store,
    cards,
    logger: silentLogger,
    bridge: { connected: () => true },
    replies: 'classic',
    clock: new ManualClock(),
    ...extra,
  });
  return { log, row, turns, refuse };
}

const started = {
  type: 'turn_started',
  turnId: 't',
  route,
  inboundIds: ['in-1'],
  request: 'r',
  startedAt: 0,
} as const;

describe('the turns shell', () => {
  it("an arrival's Telegram request starts when its caller acknowledges it (after the hand-over to the bridge)", async () => {
    const { log, row, turns } = world();
    turns.arrive(row, ADMITTED).acknowledge();
    turns.frame({ ...started, inboundIds: [...started.inboundIds] });
    await new Promise((resolve) => setImmediate(resolve));
    log.length = 0;
    // A second message while the turn runs: it waits, 👀, and that reaction goes after the hand-over.
    const arrival = turns.arrive({ ...row, inboundId: 'in-2', telegramMessageId: 10 }, ADMITTED);
    log.push('handed over');
    arrival.acknowledge();
    await new Promise((resolve) => setImmediate(resolve));
    expect(log.filter((entry) => entry === 'handed over' || entry.startsWith('api.'))).toEqual([
      'handed over',
      'api.setMessageReaction',
    ]);
  });

  it('applies a step’s writes in one transaction before any Telegram call of it', async () => {
    const { log, row, turns } = world();
    turns.arrive(row, ADMITTED).acknowledge();
    await new Promise((resolve) => setImmediate(resolve));
    log.length = 0;
    turns.frame({ ...started, inboundIds: [...started.inboundIds] });
    expect(log.slice(0, 4)).toEqual(['begin', 'upsertTurn', 'setInboundState', 'commit']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(log.slice(4).every((entry) => entry.startsWith('api.') || entry === 'card')).toBe(true);
    expect(log.slice(4)).toContain('api.sendChatAction');
    expect(log.slice(4)).toContain('api.setMessageReaction');
    expect(turns.running(route)).toBe('t');
  });

  it('undoes a step the store refused: the frame sent again opens the turn', async () => {
    const { log, row, turns, refuse } = world();
    turns.arrive(row, ADMITTED).acknowledge();
    await new Promise((resolve) => setImmediate(resolve));
    refuse.writes = true;
    log.length = 0;
    expect(() => turns.frame({ ...started, inboundIds: [...started.inboundIds] })).toThrow(/disk is full/);
    expect(log).toEqual(['begin']);
    expect(turns.running(route)).toBeUndefined();
    refuse.writes = false;
    turns.frame({ ...started, inboundIds: [...started.inboundIds] });
    expect(turns.running(route)).toBe('t');
    expect(log).toContain('upsertTurn');
  });

  // The reply's presentation was decided again when the turn opened (issue 28): a /settings change in
  // between gave a message acknowledged with a "Thinking…" draft a classic answer. Decided once now.
  it('presents the reply as decided when its message came in, though /settings changed before the turn opened', async () => {
    let setting: 'rich' | 'classic' = 'rich';
    const mine = { chatId: 600 };
    const { log, row, turns } = world({ writes: false }, { replies: 'rich', repliesOf: () => setting });
    turns.arrive({ ...row, route: mine }, ADMITTED).acknowledge();
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toContain('api.sendMessageDraft'); // "Thinking…": a draft reply
    setting = 'classic';
    log.length = 0;
    turns.frame({ ...started, route: mine, inboundIds: [...started.inboundIds] });
    turns.frame({ type: 'text', turnId: 't', blockId: 'b1', text: 'The answer' });
    await new Promise((resolve) => setImmediate(resolve));
    const calls = log.filter((entry) => entry.startsWith('api.'));
    expect(calls).toContain('api.sendRichMessageDraft');
    expect(calls.filter((entry) => entry === 'api.sendMessage' || entry === 'api.editMessageText')).toEqual(
      [],
    );
  });
});
