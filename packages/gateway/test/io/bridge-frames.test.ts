/**
 * The bridge-frame dispatch (`io/bridge/bridge-frames.ts`): the daily budgets' ledger sees the frames it
 * reads before their owner, and no other. It used to wrap the whole frame handler, so every text delta of
 * every reply crossed the ledger on its way to the chat (issue 28).
 */
import { type AppFrame, silentLogger } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { createFrameDispatch } from '../../src/io/bridge/bridge-frames.js';

describe('the frame dispatch', () => {
  it('hands the ledger a turn’s start before the turns, and never a text delta', () => {
    const seen: string[] = [];
    const dispatch = createFrameDispatch({
      turns: { frame: (f) => void seen.push(`turns ${f.type}`), live: () => [] },
      prompts: { frame: () => {} },
      commands: { answer: () => {} },
      files: { frame: () => {} },
      schedules: { request: () => {} },
      spend: { observe: (f) => void seen.push(`spend ${f.type}`) },
      reply: () => {},
      onAgentStatus: () => {},
      allows: () => true,
      setLastError: () => {},
      logger: silentLogger,
    });
    const route = { chatId: 5 };
    const frames: AppFrame[] = [
      { type: 'turn_started', turnId: 't', route, inboundIds: ['a'], request: 'r', startedAt: 0 },
      { type: 'text_delta', turnId: 't', blockId: 'b', delta: 'Hel' },
      { type: 'turn_ended', turnId: 't', outcome: 'success', costUsd: 0.01 },
    ];
    for (const frame of frames) dispatch(frame);
    expect(seen).toEqual([
      'spend turn_started',
      'turns turn_started',
      'turns text_delta',
      'spend turn_ended',
      'turns turn_ended',
    ]);
  });
});
