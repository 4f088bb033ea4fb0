import type { Route } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { type HeldFrame, holdsMessage, holdsSlashCommand, nextRelease } from '../src/core/hold.js';

const chat: Route = { chatId: 1 };
const other: Route = { chatId: 2 };
const topic: Route = { chatId: 1, threadId: 7 };

describe('hold rules: arriving messages and commands', () => {
  it.each([
    {
      name: 'idle, nothing held: written',
      holding: false,
      turnRoute: undefined,
      shared: false,
      route: chat,
      held: false,
    },
    {
      name: 'a turn runs (per-chat): written as a steer',
      holding: false,
      turnRoute: chat,
      shared: false,
      route: chat,
      held: false,
    },
    {
      name: 'something is held: held behind it',
      holding: true,
      turnRoute: undefined,
      shared: false,
      route: chat,
      held: true,
    },
    {
      name: 'shared, turn of another chat: held',
      holding: false,
      turnRoute: other,
      shared: true,
      route: chat,
      held: true,
    },
    {
      name: 'shared, turn of another topic: held',
      holding: false,
      turnRoute: topic,
      shared: true,
      route: chat,
      held: true,
    },
    {
      name: 'shared, turn of the same chat: steered',
      holding: false,
      turnRoute: chat,
      shared: true,
      route: chat,
      held: false,
    },
  ])('message: $name', ({ holding, turnRoute, shared, route, held }) => {
    expect(holdsMessage({ holding, turnRoute, shared }, route)).toBe(held);
  });

  it.each([
    { name: 'idle: written', holding: false, turnRoute: undefined, held: false },
    { name: 'a turn runs: held', holding: false, turnRoute: chat, held: true },
    { name: 'something is held: held behind it', holding: true, turnRoute: undefined, held: true },
  ])('/clear or /compact: $name', ({ holding, turnRoute, held }) => {
    expect(holdsSlashCommand({ holding, turnRoute, shared: false })).toBe(held);
  });
});

describe('hold rules: release', () => {
  const message: HeldFrame = {
    type: 'user_message',
    route: chat,
    inboundId: 'm',
    telegramMessageId: 1,
    sender: { id: 1, name: 'Ann' },
    text: 'hi',
    attachments: [],
    sentAt: 0,
  };
  const clear: HeldFrame = { type: 'clear', route: chat, commandId: 'c' };
  const ready = { settling: false, writable: true, idle: true };

  it.each([
    { name: 'nothing held', held: [], view: ready, want: 'wait' },
    { name: 'a message into an idle CLI', held: [message], view: ready, want: 'message' },
    {
      name: 'a message while a turn runs (after a released command)',
      held: [message],
      view: { ...ready, idle: false },
      want: 'message',
    },
    { name: 'a command into an idle CLI', held: [clear, message], view: ready, want: 'command' },
    {
      name: 'a command while a turn runs: waits, and so does what follows',
      held: [clear, message],
      view: { ...ready, idle: false },
      want: 'wait',
    },
    {
      name: 'a process that does not read',
      held: [message],
      view: { ...ready, writable: false },
      want: 'wait',
    },
    {
      name: 'a write from before a crash is being settled',
      held: [message],
      view: { ...ready, settling: true },
      want: 'wait',
    },
  ])('$name: $want', ({ held, view, want }) => {
    expect(nextRelease(held, view)).toBe(want);
  });
});
