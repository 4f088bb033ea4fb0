import { describe, expect, it } from 'vitest';
import { createMetrics } from '../src/index.js';
import { connectBridge, startTurn, startWorld, waitUntil } from './harness.js';

/** The value of one series in Prometheus exposition text, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const SUCCESS = 'switchyard_turns_total{outcome="success",agent="test"}';

describe('metrics', () => {
  it('counts a turn, its first token, its cost and the Telegram calls it made, on 127.0.0.1', async () => {
    const metrics = createMetrics({ port: 0, agent: 'test' });
    const url = await metrics.start();
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const world = await startWorld({ metrics });
      const bridge = await connectBridge(world.socketPath);
      const chatId = world.tg.privateChat().id;
      world.tg.sendText(chatId, 'hello');
      const frame = await waitUntil(() => bridge.received.find((f) => f.type === 'user_message'));
      const inboundId = frame.type === 'user_message' ? frame.inboundId : '';
      await startTurn(bridge, { turnId: 't1', route: { chatId }, inboundIds: [inboundId] });
      await bridge.send({ type: 'text_delta', turnId: 't1', blockId: 'b1', delta: 'Hi' });
      // The answer's first message goes with its first text; the final text is an edit of it.
      await world.tg.waitFor(() =>
        world.tg.messages(chatId).find((m) => m.from === 'bot' && m.text === 'Hi'),
      );
      await bridge.send({ type: 'text', turnId: 't1', blockId: 'b1', text: 'Hi there.' });
      await bridge.send({
        type: 'turn_ended',
        turnId: 't1',
        outcome: 'success',
        costUsd: 0.25,
        durationMs: 1500,
      });
      // A turn_ended resent after a reconnect counts once.
      await bridge.send({
        type: 'turn_ended',
        turnId: 't1',
        outcome: 'success',
        costUsd: 0.25,
        durationMs: 1500,
      });
      await world.tg.waitFor(
        () => world.tg.messages(chatId).find((m) => m.from === 'bot' && m.text === 'Hi there.'),
        {
          timeoutMs: 8000,
        },
      );

      const scrape = async () => (await fetch(url)).text();
      // Scrape until the ended turn shows (the render and the frame handling may trail the message).
      let text = await scrape();
      for (let i = 0; i < 100 && sample(text, SUCCESS) !== 1; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        text = await scrape();
      }
      expect(sample(text, SUCCESS)).toBe(1);
      expect(sample(text, 'switchyard_turns_started_total{agent="test"}')).toBe(1);
      expect(sample(text, 'switchyard_turn_duration_seconds_count{agent="test"}')).toBe(1);
      expect(sample(text, 'switchyard_turn_duration_seconds_sum{agent="test"}')).toBe(1.5);
      expect(sample(text, 'switchyard_first_token_seconds_count{agent="test"}')).toBe(1);
      expect(sample(text, 'switchyard_cost_usd_total{agent="test"}')).toBe(0.25);
      expect(sample(text, 'switchyard_bridge_connected{agent="test"}')).toBe(1);
      expect(sample(text, 'switchyard_inbound_queue_length{agent="test"}')).toBe(0);
      // Today's cost, of the agent and of the conversation (by its key).
      expect(sample(text, 'switchyard_cost_today_usd{agent="test"}')).toBe(0.25);
      expect(
        sample(text, `switchyard_conversation_cost_today_usd{conversation="${chatId}",agent="test"}`),
      ).toBe(0.25);
      expect(
        sample(text, 'switchyard_telegram_calls_total{method="sendMessage",result="ok",agent="test"}'),
      ).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'switchyard_telegram_edits_total{agent="test"}')).toBeGreaterThanOrEqual(1);
      expect((await fetch(url.replace('/metrics', '/other'))).status).toBe(404);
    } finally {
      await metrics.stop();
    }
  });

  it('counts 429s by method and bridge reconnects', async () => {
    const metrics = createMetrics({ port: 0, agent: 'test' });
    metrics.telegramCall('sendMessage', { ok: false, error_code: 429 });
    metrics.telegramCall('sendMessage', { ok: true });
    metrics.bridgeConnected(true);
    metrics.bridgeConnected(false);
    metrics.bridgeConnected(true);
    const text = await metrics.render();
    expect(sample(text, 'switchyard_telegram_429_total{method="sendMessage",agent="test"}')).toBe(1);
    expect(
      sample(text, 'switchyard_telegram_calls_total{method="sendMessage",result="429",agent="test"}'),
    ).toBe(1);
    expect(sample(text, 'switchyard_bridge_reconnects_total{agent="test"}')).toBe(1);
    await metrics.stop();
  });

  it('counts webhook requests by hook and result, and budget refusals by budget', async () => {
    const metrics = createMetrics({ port: 0, agent: 'test' });
    metrics.webhookResult('github', 'accepted');
    metrics.webhookResult('github', 'signature_mismatch');
    metrics.webhookResult('github', 'signature_mismatch');
    metrics.budgetRefused('user');
    const text = await metrics.render();
    expect(
      sample(text, 'switchyard_webhook_requests_total{hook="github",result="accepted",agent="test"}'),
    ).toBe(1);
    expect(
      sample(
        text,
        'switchyard_webhook_requests_total{hook="github",result="signature_mismatch",agent="test"}',
      ),
    ).toBe(2);
    expect(sample(text, 'switchyard_budget_refusals_total{scope="user",agent="test"}')).toBe(1);
    await metrics.stop();
  });
});
