/**
 * Commands end to end: what each sends to the bridge, what the user reads back (including the bridge's
 * `command_result`), the valid-argument lists, `/status`, `/pins`, `/restart`, and the bridge being away.
 */
import type { AppFrame } from '@switchyard/protocol';
import { describe, expect, it, vi } from 'vitest';
import { NO_RESTART, QUEUED_NOTE } from '../src/core/commands/commands.js';
import { COMMANDS } from '../src/index.js';
import {
  botMessage,
  botMessages,
  connectBridge,
  type FakeBridge,
  framesOf,
  sleep,
  startTurn,
  startWorld,
  type World,
  waitUntil,
} from './harness.js';

/** The fields of the command frames these tests read. */
type CommandFrame = { type: AppFrame['type']; commandId: string; route?: { chatId: number } };

/** Waits for the bridge to receive a frame of `type`, beyond the `already` seen before. */
async function nextFrame(b: FakeBridge, type: AppFrame['type'], already = 0): Promise<CommandFrame> {
  return waitUntil(() => b.received.filter((f) => f.type === type)[already] as CommandFrame | undefined);
}

/** Starts turn `tp` in `chatId` with a tool running, and waits until its progress card is pinned. */
async function pinnedCard(b: FakeBridge, w: World, chatId: number): Promise<void> {
  await startTurn(b, { turnId: 'tp', route: { chatId }, request: 'long work' });
  await b.send({
    type: 'tool_started',
    turnId: 'tp',
    toolUseId: 'u1',
    name: 'Bash',
    input: { command: 'ls' },
  });
  await w.tg.waitFor(() => w.tg.chat(chatId).pinned.length === 1, { timeoutMs: 8000 });
}

describe.concurrent('commands', () => {
  it('/start and /help list the commands', async ({ onTestFinished }) => {
    const world = await startWorld({}, {}, onTestFinished);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, '/start');
    const help = await botMessage(tg, chatId, (t) => t.includes('Claude Code agent'));
    for (const c of COMMANDS) expect(help.text).toContain(`/${c.command}`);
    tg.sendText(chatId, '/help');
    await tg.waitFor(() => botMessages(tg, chatId).length === 2);
    expect(botMessages(tg, chatId)[1]?.text).toBe(help.text);
    expect(world.gateway.status().inbox).toBe(0);
  });

  it('/stop sends an interrupt and says nothing of its success (the stopped reply says it once)', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({}, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, '/stop');
    const frame = await nextFrame(bridge, 'interrupt');
    expect(frame.route).toEqual({ chatId });
    await bridge.send({ type: 'command_result', commandId: frame.commandId, ok: true });
    await sleep(500);
    // Neither "Stopping…" nor "Done.": the turn's own reply ends "⏹ Stopped.".
    expect(botMessages(tg, chatId)).toEqual([]);
  });

  it('/stop shows what the bridge says when it has something to say, and a failure', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({}, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, '/stop');
    const frame = await nextFrame(bridge, 'interrupt');
    await bridge.send({
      type: 'command_result',
      commandId: frame.commandId,
      ok: true,
      message: 'Interrupted.',
    });
    await botMessage(tg, chatId, (t) => t === 'Interrupted.');
    // A failed command without a message still gets an answer.
    tg.sendText(chatId, '/stop');
    const second = await nextFrame(bridge, 'interrupt', 1);
    await bridge.send({ type: 'command_result', commandId: second.commandId, ok: false });
    await botMessage(tg, chatId, (t) => t === 'That did not work.');
    // Nothing of this went to the agent as a message.
    expect(framesOf(bridge, 'user_message')).toHaveLength(0);
  });

  it('shows a command’s result that arrives after a gateway restart (the route is in SQLite)', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({}, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, '/compact');
    const frame = await nextFrame(bridge, 'compact');
    await botMessage(tg, chatId, (t) => t === 'Compacting…');
    await world.restart();
    await bridge.send({
      type: 'command_result',
      commandId: frame.commandId,
      ok: true,
      message: 'Compacted.',
    });
    await botMessage(tg, chatId, (t) => t === 'Compacted.', 8000);
    // Said once: the route is forgotten as the result is shown.
    await bridge.send({ type: 'command_result', commandId: frame.commandId, ok: true, message: 'Again.' });
    await sleep(300);
    expect(botMessages(tg, chatId).filter((m) => m.text === 'Again.')).toHaveLength(0);
  });

  it('/model and /mode list valid arguments when missing or bad, and set them when good', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({}, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const chatId = tg.privateChat().id;
    await bridge.send({ type: 'status', state: 'idle', model: 'opus', mode: 'default' });

    tg.sendText(chatId, '/model');
    const shown = await botMessage(tg, chatId, (t) => t.startsWith('Model:'));
    expect(shown.text).toContain('Model: opus');
    expect(shown.text).toContain('opus, sonnet, haiku');
    tg.sendText(chatId, '/model gpt-5');
    const bad = await botMessage(tg, chatId, (t) => t.includes('gpt-5'));
    expect(bad.text).toContain('Valid models: opus, sonnet, haiku');
    tg.sendText(chatId, '/model sonnet');
    const setModel = await nextFrame(bridge, 'set_model');
    expect(setModel).toMatchObject({ model: 'sonnet', route: { chatId } });
    await bridge.send({
      type: 'command_result',
      commandId: setModel.commandId,
      ok: true,
      message: 'Model: sonnet',
    });
    await botMessage(tg, chatId, (t) => t === 'Model: sonnet');

    tg.sendText(chatId, '/mode');
    const mode = await botMessage(tg, chatId, (t) => t.startsWith('Mode:'));
    expect(mode.text).toContain('Mode: default');
    expect(mode.text).toContain('Allowed modes: default, acceptEdits, plan.');
    // bypassPermissions is the operator's choice (allowedModes), never a chat command's.
    tg.sendText(chatId, '/mode bypassPermissions');
    const refused = await botMessage(tg, chatId, (t) => t.startsWith('Mode bypassPermissions'));
    expect(refused.text).toBe(
      'Mode bypassPermissions is not allowed for this agent. Allowed modes: default, acceptEdits, plan.',
    );
    tg.sendText(chatId, '/mode yolo');
    const badMode = await botMessage(tg, chatId, (t) => t.includes('yolo'));
    expect(badMode.text).toContain('acceptEdits');
    tg.sendText(chatId, '/mode ACCEPTEDITS');
    expect(await nextFrame(bridge, 'set_mode')).toMatchObject({ mode: 'acceptEdits' });
    // No bad argument reached the bridge.
    expect(framesOf(bridge, 'set_model')).toHaveLength(1);
    expect(framesOf(bridge, 'set_mode')).toHaveLength(1);
  });

  it('/compact, /clear and /new send their frames; unknown commands and extra arguments are explained', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({}, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, '/compact');
    const compact = await nextFrame(bridge, 'compact');
    tg.sendText(chatId, '/clear');
    await nextFrame(bridge, 'clear');
    tg.sendText(chatId, '/new');
    await nextFrame(bridge, 'clear', 1);
    await botMessage(tg, chatId, (t) => t === 'Compacting…');
    await tg.waitFor(
      () => botMessages(tg, chatId).filter((m) => m.text === 'Starting a new conversation…').length === 2,
    );
    await bridge.send({ type: 'command_result', commandId: compact.commandId, ok: true });
    await botMessage(tg, chatId, (t) => t === 'Done.');
    tg.sendText(chatId, '/frobnicate');
    const unknown = await botMessage(tg, chatId, (t) => t.includes('/frobnicate'));
    expect(unknown.text).toContain('/status');
    tg.sendText(chatId, '/clear everything');
    await botMessage(tg, chatId, (t) => t.includes('takes no arguments'));
    await sleep(200);
    expect(framesOf(bridge, 'clear')).toHaveLength(2);
  });

  it('/status shows state, model, mode, turn, queue, bridge, last error and pins', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({}, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const chatId = tg.privateChat().id;
    await startTurn(bridge, { turnId: 'turn-42', route: { chatId }, request: 'work' });
    await bridge.send({
      type: 'operator_event',
      kind: 'overloaded',
      message: 'Claude is overloaded',
      route: { chatId },
    });
    tg.sendText(chatId, '/status');
    const request = await nextFrame(bridge, 'status_request');
    // Asked about this conversation, and answered for it.
    expect(request.route).toEqual({ chatId });
    await bridge.send({
      type: 'status',
      route: { chatId },
      costUsd: 0.42,
      state: 'running',
      model: 'sonnet',
      mode: 'plan',
      turnId: 'turn-42',
      commandId: request.commandId,
      history: [
        { role: 'user', text: 'please   refactor\nthe store', at: Date.UTC(2026, 0, 1, 9, 30) },
        {
          role: 'assistant',
          text: '## Plan\n\n**Split** the `store`, see [docs](https://x.dev)',
          at: Date.UTC(2026, 0, 1, 9, 30),
        },
        { role: 'assistant', text: 'x'.repeat(400), at: Date.UTC(2026, 0, 1, 9, 31) },
      ],
    });
    const status = await botMessage(tg, chatId, (t) => t.startsWith('Conversation:'));
    // The agent's Markdown reads as the text it renders to, not as raw marks (issue 31).
    expect(status.text).toContain(
      'Recently (UTC):\n09:30 👤 please refactor the store\n09:30 🤖 Plan Split the store, see docs\n09:31 🤖 xxx',
    );
    expect(status.text).toMatch(/x…$/);
    expect(status.text.length).toBeLessThan(1200);
    expect(status.text).toContain('Conversation: running');
    expect(status.text).toContain('Cost so far: $0.420');
    expect(status.text).toContain('Bridge: connected');
    expect(status.text).toContain('Model: sonnet · Mode: plan');
    expect(status.text).toContain('Current turn: turn-42');
    expect(status.text).toContain('Queue: 0 message(s)');
    expect(status.text).toContain('Pinned cards: 0');
    expect(status.text).toContain('Last error: Claude is overloaded');
  });

  it("/status never shows another conversation's error; an error of no conversation goes to the alert chat only", async ({
    onTestFinished,
  }) => {
    const operator = 100_000_001; // the sandbox's default user: its private chat is the alert chat
    const world = await startWorld({ alertChat: { chatId: operator } }, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    tg.privateChat();
    const group = tg.createGroup({ title: 'team', supergroup: true });
    tg.sendText(group.id, '/help'); // the agent has talked in the group: the bridge may address it
    await botMessage(tg, group.id, (t) => t.includes('Claude Code agent'));
    await startTurn(bridge, { turnId: 'tg1', route: { chatId: group.id }, request: 'work' });
    await bridge.send({
      type: 'turn_ended',
      turnId: 'tg1',
      outcome: 'error',
      error: 'stderr: /home/ann/secret',
    });
    await bridge.send({
      type: 'operator_event',
      kind: 'cli_exited',
      message: 'bridge-wide: exit 1, stderr …',
    });
    await botMessage(
      tg,
      operator,
      (t) => t.includes('outside any conversation') && t.includes('bridge-wide'),
    );
    const ask = async (chatId: number, already: number): Promise<string> => {
      tg.sendText(chatId, '/status');
      const request = await nextFrame(bridge, 'status_request', already);
      await bridge.send({
        type: 'status',
        route: { chatId },
        state: 'idle',
        commandId: request.commandId,
      });
      return (await botMessage(tg, chatId, (t) => t.startsWith('Conversation:'))).text;
    };
    const mine = await ask(operator, 0);
    expect(mine).toContain('Last error: none');
    expect(mine).not.toContain('secret');
    expect(await ask(group.id, 1)).toContain('Last error: stderr: /home/ann/secret');
    expect(tg.messages(group.id).some((m) => m.text.includes('bridge-wide'))).toBe(false);
  });

  it('/status answers from the gateway’s view when the bridge does not answer', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({ statusTimeoutMs: 300 }, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, '/status');
    await nextFrame(bridge, 'status_request');
    const status = await botMessage(tg, chatId, (t) => t.startsWith('Conversation:'), 6000);
    expect(status.text).toContain('did not answer');
  });

  it('/pins lists the pinned cards', async ({ onTestFinished }) => {
    const world = await startWorld(
      {
        card: { showDelayMs: 300, coalesceMs: 50, minEditIntervalMs: 200, heartbeatMs: 500 },
      },
      {},
      onTestFinished,
    );
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, '/pins');
    await botMessage(tg, chatId, (t) => t === 'No pinned cards.');
    await pinnedCard(bridge, world, chatId);
    tg.sendText(chatId, '/pins');
    const list = await botMessage(tg, chatId, (t) => t.includes('turn tp'));
    expect(list.text).toContain(`message ${tg.chat(chatId).pinned[0]?.messageId}`);
  });

  it("/pins in a group does not list another chat's pins", async ({ onTestFinished }) => {
    const world = await startWorld(
      {
        card: { showDelayMs: 300, coalesceMs: 50, minEditIntervalMs: 200, heartbeatMs: 500 },
      },
      {},
      onTestFinished,
    );
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const chatId = tg.privateChat().id;
    const group = tg.createGroup({ title: 'team', supergroup: true });
    await pinnedCard(bridge, world, chatId);
    tg.sendText(group.id, '/pins');
    await botMessage(tg, group.id, (t) => t === 'No pinned cards.');
  });

  it('/restart calls the configured restarter, and says clearly when there is none', async ({
    onTestFinished,
  }) => {
    const restartBridge = vi.fn(async () => {});
    const world = await startWorld({ restartBridge }, {}, onTestFinished);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, '/restart');
    await botMessage(tg, chatId, (t) => t === 'The agent bridge was restarted.');
    expect(restartBridge).toHaveBeenCalledTimes(1);
    await world.close();

    const none = await startWorld({}, {}, onTestFinished);
    const chat2 = none.tg.privateChat().id;
    none.tg.sendText(chat2, '/restart');
    await botMessage(none.tg, chat2, (t) => t === NO_RESTART);

    await none.close();
    const failing = await startWorld(
      { restartBridge: () => Promise.reject(new Error('systemctl: unit not found')) },
      {},
      onTestFinished,
    );
    const chat3 = failing.tg.privateChat().id;
    failing.tg.sendText(chat3, '/restart');
    const failed = await botMessage(failing.tg, chat3, (t) => t.includes('restart failed'));
    expect(failed.text).not.toContain('systemctl');
  });

  it('says when the bridge is disconnected, and delivers the queued command when it is back', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({}, {}, onTestFinished);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, '/stop');
    const ack = await botMessage(tg, chatId, (t) => t.startsWith('Stopping…'));
    expect(ack.text).toContain(QUEUED_NOTE);
    tg.sendText(chatId, '/status');
    const status = await botMessage(tg, chatId, (t) => t.startsWith('Conversation:'));
    expect(status.text).toContain('Bridge: disconnected');
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const frame = await nextFrame(bridge, 'interrupt');
    await bridge.send({
      type: 'command_result',
      commandId: frame.commandId,
      ok: true,
      message: 'Nothing to stop.',
    });
    await botMessage(tg, chatId, (t) => t === 'Nothing to stop.');
  });
});
