/**
 * Schedules through the whole system, with the real CLI: a six-field schedule every 10 s delivers each
 * due time once, with the due time in the model's request, across a gateway `kill -9` between two due
 * times and one right at a due time; runs missed while the gateway was down (state prepared before the
 * start) inside and outside the grace; a schedule the agent makes with its `schedule_add` tool is posted
 * with Keep / Delete and fires only once kept; `/schedules` buttons pause and delete.
 */
import path from 'node:path';
import { openGatewayStore } from '@switchyard/gateway';
import { callTool, rule, say, type TelegramServer } from '@switchyard/sandbox';
import { assert, describe, expect, it, vi } from 'vitest';
import { botMessages, type System, systemPerTest } from './system.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const iso = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`;
/** Sleeps until `ms` (wall clock: the services run on the system clock). */
const until = (ms: number): Promise<void> => sleep(Math.max(0, ms - Date.now()));
/** The next multiple of 10 s after `ms`, at least `margin` ahead. */
const nextTen = (ms: number, margin = 0): number => Math.ceil((ms + margin + 1) / 10_000) * 10_000;

/** The due times the model was asked to run for schedule `name`, in request order (repeats kept). */
function dueTimesAsked(system: System, name: string): string[] {
  const asked: string[] = [];
  for (const request of system.model.messageRequests()) {
    const text = request.view?.userText ?? '';
    const match = new RegExp(`Scheduled run of "${name}", due (\\S+Z)`).exec(text);
    // A turn's later requests (after a tool call) carry the same user text: count its first only.
    if (match?.[1] && request.view?.repliesSoFar === 0) asked.push(match[1]);
  }
  return asked;
}
/**
 * When the gateway said it started, from the time on its `gateway started` log lines (the `n`th start, from
 * 0), or `undefined` before it has. Its schedules start in the same step, so a config schedule's due times
 * count from there.
 */
function gatewayStartedAt(system: System, n = 0): number | undefined {
  const times = system
    .logs()
    .split('\n')
    .filter((line) => line.includes('"gateway started"'))
    .map((line) => Date.parse((JSON.parse(line) as { time: string }).time));
  return times[n];
}
/** The notes the chat shows (bot messages starting with ⏰). */
const notes = (telegram: TelegramServer, chatId: number): string[] =>
  botMessages(telegram, chatId)
    .map((m) => m.text)
    .filter((t) => t.startsWith('⏰'));
/** The gateway's SQLite file of a system (to prepare state before its first start). */
const gatewayDb = (system: System): string => path.join(system.dir, 'state', 'gateway', 'gateway.sqlite');

describe('end to end: schedules', () => {
  const startSystem = systemPerTest();

  it('a six-field schedule every 10 s delivers each due time once, across kill -9 between due times and at one', async () => {
    const system = await startSystem({
      rules: [rule(/Scheduled run of "tick"/, say('tick done'))],
      agent: (telegram) => ({
        schedules: [
          {
            name: 'tick',
            cron: '*/10 * * * * *',
            chat: telegram.privateChat().id,
            prompt: 'Say tick.',
          },
        ],
      }),
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    // The first due time after the gateway's start is answered. It is counted from when the gateway says
    // it started, not from the spawn: on a loaded machine starting takes longer than any margin guessed
    // here, and a due time before the start never runs.
    const startedAt = await vi.waitFor(
      () => gatewayStartedAt(system) ?? assert.fail('the gateway has not started'),
      {
        timeout: 60_000,
        interval: 50,
      },
    );
    const first = nextTen(Math.max(Date.now(), startedAt));
    await telegram.waitFor(() => dueTimesAsked(system, 'tick').includes(iso(first)) || undefined, {
      timeoutMs: 60_000,
    });
    // Between two due times: killed 3 s after one, back 3 s later.
    const between = nextTen(Date.now());
    await until(between + 3_000);
    await system.kill('gateway');
    await sleep(3_000);
    system.start('gateway');
    // Right at a due time: killed as it falls due, back 3 s later (well inside the 1 h grace).
    const at = nextTen(Date.now(), 2_000);
    await until(at);
    await system.kill('gateway');
    await sleep(3_000);
    system.start('gateway');
    const after = nextTen(at);
    await telegram.waitFor(() => dueTimesAsked(system, 'tick').includes(iso(after)) || undefined, {
      timeoutMs: 90_000,
    });
    const asked = dueTimesAsked(system, 'tick');
    // Each due time once, in order, none missing from the first to the last (none was merged: each
    // answer takes well under 10 s, and the chat would have said so).
    expect(new Set(asked).size).toBe(asked.length);
    const start = Date.parse(asked[0] ?? '');
    // Nothing from before the gateway's first start ran.
    expect(start).toBeGreaterThan(startedAt);
    const end = Date.parse(asked.at(-1) ?? '');
    const expected = Array.from({ length: (end - start) / 10_000 + 1 }, (_, i) => iso(start + i * 10_000));
    if (notes(telegram, chatId).some((n) => n.includes('merged'))) {
      expect(expected).toEqual(expect.arrayContaining(asked));
    } else {
      expect(asked).toEqual(expected);
    }
    expect(asked).toContain(iso(at));
    expect(asked).toContain(iso(between + 10_000));
    // Each run's note is in the chat once, and its answer replies to it.
    const shown = notes(telegram, chatId);
    expect(new Set(shown).size).toBe(shown.length);
    expect(shown).toContain(`⏰ tick · due ${iso(at)}`);
    const note = botMessages(telegram, chatId).find((m) => m.text === `⏰ tick · due ${iso(first)}`);
    const answer = botMessages(telegram, chatId).find(
      (m) => m.text === 'tick done' && m.replyToMessageId === note?.messageId,
    );
    expect(answer).toBeDefined();
  });

  it('runs missed while down: the newest inside the grace runs once, the rest are said skipped, nothing again after a restart', async () => {
    const now = Date.now();
    const inside = new Date(now - 2 * 60_000);
    const outside = new Date(now - 20 * 60_000);
    const fields = (d: Date, seconds: string) =>
      `${seconds} ${d.getUTCMinutes()} ${d.getUTCHours()} ${d.getUTCDate()} ${d.getUTCMonth() + 1} *`;
    const system = await startSystem({
      rules: [
        rule(/Scheduled run of "inside"/, say('caught up')),
        rule(/Scheduled run of "outside"/, say('too late')),
      ],
      agent: (telegram) => ({
        scheduleGraceMinutes: 5,
        schedules: [
          // Four due times in the minute two minutes ago; the newest is inside the 5 min grace.
          {
            name: 'inside',
            cron: fields(inside, '*/15'),
            chat: telegram.privateChat().id,
            prompt: 'Catch up.',
          },
          // One due time twenty minutes ago: outside.
          {
            name: 'outside',
            cron: fields(outside, '0'),
            chat: telegram.privateChat().id,
            prompt: 'Too late.',
          },
        ],
      }),
    });
    const { telegram, chatId } = system;
    // The state a gateway down for half an hour left: every schedule decided up to 30 minutes ago.
    const store = openGatewayStore(gatewayDb(system));
    for (const id of ['inside', 'outside'])
      store.saveScheduleState(id, { decidedUpTo: now - 30 * 60_000, held: undefined, merged: 0 });
    store.close();
    system.start('gateway');
    system.start('bridge');
    const newest = Date.UTC(
      inside.getUTCFullYear(),
      inside.getUTCMonth(),
      inside.getUTCDate(),
      inside.getUTCHours(),
      inside.getUTCMinutes(),
      45,
    );
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'caught up'), {
      timeoutMs: 60_000,
    });
    await telegram.waitFor(() => notes(telegram, chatId).length >= 3 || undefined, { timeoutMs: 10_000 });
    expect(dueTimesAsked(system, 'inside')).toEqual([iso(newest)]);
    expect(dueTimesAsked(system, 'outside')).toEqual([]);
    const said = notes(telegram, chatId);
    expect(said).toContain(
      `⏰ inside: 3 run(s) missed while Switchyard was down (due ${iso(newest - 45_000)} to ${iso(newest - 15_000)}) were skipped.`,
    );
    const outsideDue = Date.UTC(
      outside.getUTCFullYear(),
      outside.getUTCMonth(),
      outside.getUTCDate(),
      outside.getUTCHours(),
      outside.getUTCMinutes(),
      0,
    );
    expect(said).toContain(
      `⏰ outside: 1 run(s) missed while Switchyard was down (due ${iso(outsideDue)}) were skipped.`,
    );
    // A restart decides nothing again: no second run, no second note.
    const before = botMessages(telegram, chatId).length;
    await system.kill('gateway');
    system.start('gateway');
    await sleep(6_000);
    expect(botMessages(telegram, chatId)).toHaveLength(before);
    expect(dueTimesAsked(system, 'inside')).toEqual([iso(newest)]);
  });

  it('a schedule the agent makes with schedule_add is posted with Keep / Delete and runs only once Keep is pressed (issue 27)', async () => {
    const dueAt: Record<string, number> = {};
    const ask = (name: string, prompt: string, aheadMs: number) =>
      rule(
        `schedule ${name}`,
        () => {
          dueAt[name] = Math.ceil((Date.now() + aheadMs) / 1000) * 1000;
          return callTool('mcp__switchyard__schedule_add', { name, at: iso(dueAt[name] ?? 0), prompt });
        },
        (ctx) => {
          const result = ctx.toolResults.map((r) => r.text).join('\n');
          return say(
            result.includes(`Added, waiting: ${name}`)
              ? `Asked for ${name}.`
              : `Failed: ${result.slice(0, 300)}`,
          );
        },
      );
    const system = await startSystem({
      rules: [
        ask('stretch', 'Tell them to stretch.', 10_000),
        ask('water', 'Tell them to drink water.', 20_000),
        rule(/Scheduled run of "stretch"/, say('Time to stretch!')),
        rule(/Scheduled run of "water"/, say('Drink water!')),
      ],
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    const posted = (name: string) =>
      telegram.waitFor(
        () =>
          botMessages(telegram, chatId).find((m) => m.text.startsWith('🗓') && m.text.includes(`${name} [`)),
        { timeoutMs: 90_000 },
      );
    telegram.sendText(chatId, 'schedule stretch');
    const stretch = await posted('stretch');
    expect(stretch.replyMarkup?.inline_keyboard.flat().map((b) => b.text)).toEqual([
      '✅ Keep stretch',
      '🗑 Delete stretch',
    ]);
    expect(stretch.text).toContain('waiting for someone to press Keep');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Asked for stretch.'), {
      timeoutMs: 30_000,
    });
    // Nobody pressed Keep: its time passes and nothing runs.
    await until((dueAt.stretch ?? 0) + 3_000);
    expect(dueTimesAsked(system, 'stretch')).toEqual([]);
    expect(notes(telegram, chatId)).toEqual([]);
    telegram.pressButton(chatId, stretch.messageId, { text: '🗑 Delete stretch' });
    await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text === '🗑 stretch is deleted.'),
      {
        timeoutMs: 30_000,
      },
    );

    telegram.sendText(chatId, 'schedule water');
    const water = await posted('water');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Asked for water.'), {
      timeoutMs: 30_000,
    });
    expect(dueTimesAsked(system, 'water')).toEqual([]);
    telegram.pressButton(chatId, water.messageId, { text: '✅ Keep water' });
    await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text.startsWith('✅ water is kept')),
      {
        timeoutMs: 30_000,
      },
    );
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Drink water!'), {
      timeoutMs: 60_000,
    });
    expect(dueTimesAsked(system, 'water')).toEqual([iso(dueAt.water ?? 0)]);
    expect(notes(telegram, chatId)).toEqual([`⏰ water · due ${iso(dueAt.water ?? 0)}`]);
    // /schedules lists it, done, with its delete button.
    telegram.sendText(chatId, '/schedules');
    const list = await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text.startsWith('Schedules here')),
      { timeoutMs: 30_000 },
    );
    expect(list.text).toContain(`water [chat-2] · once at ${iso(dueAt.water ?? 0)} · done`);
  });

  it('/schedules buttons: pause stops a config schedule, delete removes a chat one; no run after the press', async () => {
    const system = await startSystem({
      rules: [
        rule(/Scheduled run of "tick"/, say('tick done')),
        rule(/Scheduled run of "mine"/, say('mine done')),
      ],
      agent: (telegram) => ({
        schedules: [
          { name: 'tick', cron: '*/10 * * * * *', chat: telegram.privateChat().id, prompt: 'Tick.' },
        ],
      }),
    });
    const { telegram, chatId } = system;
    // A schedule made in this chat earlier (every 10 s: prepared in the store, as a chat cannot make one
    // that frequent).
    const store = openGatewayStore(gatewayDb(system));
    store.addChatSchedule({
      name: 'mine',
      route: { chatId },
      cron: '5,15,25,35,45,55 * * * * *',
      at: undefined,
      timezone: undefined,
      prompt: 'Mine.',
      createdBy: undefined,
      requestId: undefined,
      expiresAt: undefined,
    });
    // Kept by the chat's allowed user, as a press of Keep does.
    store.keepChatSchedule('chat-1', telegram.defaultUser.id);
    store.close();
    system.start('gateway');
    system.start('bridge');
    await telegram.waitFor(
      () =>
        (dueTimesAsked(system, 'tick').length > 0 && dueTimesAsked(system, 'mine').length > 0) || undefined,
      { timeoutMs: 90_000 },
    );
    telegram.sendText(chatId, '/schedules');
    const list = await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text.startsWith('Schedules here')),
      {
        timeoutMs: 30_000,
      },
    );
    const labels = list.replyMarkup?.inline_keyboard.flat().map((b) => b.text) ?? [];
    expect(labels).toEqual(['⏸ Pause tick', '⏸ Pause mine', '🗑 Delete mine']);
    telegram.pressButton(chatId, list.messageId, { text: '⏸ Pause tick' });
    telegram.pressButton(chatId, list.messageId, { text: '🗑 Delete mine' });
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === '🗑 mine is deleted.'), {
      timeoutMs: 30_000,
    });
    expect(botMessages(telegram, chatId).some((m) => m.text === '⏸ tick is paused.')).toBe(true);
    const pressedAt = Date.now();
    const counts = () => [dueTimesAsked(system, 'tick'), dueTimesAsked(system, 'mine')];
    // 13 s holds a due time of each (tick at :x0, mine at :x5) and 3 s more for its run to reach the model.
    await sleep(13_000);
    for (const asked of counts())
      expect(asked.filter((due) => Date.parse(due) > pressedAt + 1_000)).toEqual([]);
    telegram.sendText(chatId, '/schedules');
    const again = await telegram.waitFor(
      () => botMessages(telegram, chatId).filter((m) => m.text.startsWith('Schedules here'))[1],
      { timeoutMs: 30_000 },
    );
    expect(again.text).toContain('tick [tick]');
    expect(again.text).toContain('paused');
    expect(again.text).not.toContain('mine');
    expect(again.replyMarkup?.inline_keyboard.flat().map((b) => b.text)).toEqual(['▶ Resume tick']);
  });
});
