/**
 * `/status` with the sandbox's scripted model: its model name is the CLI's default and its cost is what
 * the CLI computed from that model's prices, though nothing was spent. Both are labelled as simulated;
 * a real model's are not.
 */
import { describe, expect, it } from 'vitest';
import { statusText } from '../src/core/commands/command-texts.js';
import type { GatewayStatus } from '../src/options.js';

const status = {
  agentState: 'idle',
  model: 'claude-opus-5-5',
  mode: 'default',
  bridgeConnected: true,
  runningTurns: [],
  inbox: 0,
  openPrompts: 0,
  pins: 0,
  polling: { ok: true },
} as unknown as GatewayStatus;

describe('/status text', () => {
  it('labels the model and the cost of the scripted model as simulated', () => {
    const text = statusText(status, undefined, 0.765, true);
    expect(text).toContain('Cost so far: $0.765 (simulated: nothing was spent)');
    expect(text).toContain('Model: claude-opus-5-5 (simulated by the scripted model)');
  });

  it('says nothing of the kind for a real model', () => {
    expect(statusText(status, undefined, 0.765)).not.toContain('simulated');
  });

  it('shows today’s cost of the conversation and of the agent, with the agent’s daily budget', () => {
    const today = { conversationUsd: 0.42, agentUsd: 3.5, day: '2026-12-01', dailyUsd: 20 };
    expect(statusText({ ...status, costToday: today }, undefined, 0.765)).toContain(
      'Cost today: $0.420 in this conversation · $3.50 for the agent of its $20.00 daily budget',
    );
    expect(
      statusText({ ...status, costToday: { ...today, conversationUsd: undefined, dailyUsd: undefined } }),
    ).toContain('Cost today: $3.50 for the agent\n');
  });
});
