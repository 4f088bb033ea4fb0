/**
 * Alerts to the operator's chat: once per incident (a run of events of one kind with no quiet gap longer
 * than the limit), for the bridge's crash loop, login and stuck reports, a burst of 429s and a nearly
 * full disk; nothing without an alert chat.
 */
import { type FrameOf, ManualClock, type Route, silentLogger } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { createAlerts, isNewIncident } from '../src/io/ops/alerts.js';
import { botMessages, connectBridge, startWorld, waitUntil } from './harness.js';

function rig(options: { chat?: Route | undefined; free?: () => number } = {}) {
  const clock = new ManualClock();
  const sent: string[] = [];
  const alerts = createAlerts({
    agent: 'demo',
    chat: 'chat' in options ? options.chat : { chatId: -100 },
    send: (_route, text) => sent.push(text),
    stateDir: '/nonexistent',
    logger: silentLogger,
    clock,
    quietMs: 1000,
    diskFree: options.free ?? (() => 0.5),
  });
  return { alerts, sent, advance: (ms: number) => clock.advance(ms), clock };
}

describe('alerts', () => {
  it('checks the disk every 5 minutes on the gateway clock from start to stop', () => {
    let free = 0.5;
    const { alerts, sent, advance, clock } = rig({ free: () => free });
    alerts.start();
    free = 0.01;
    advance(5 * 60_000 - 1);
    expect(sent).toHaveLength(0);
    advance(1);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain('1.0% free');
    alerts.stop();
    expect(clock.pending).toBe(0);
  });

  it('one alert per incident: repeats inside the quiet gap are the same incident, after it a new one', () => {
    expect(isNewIncident(undefined, 0, 1000)).toBe(true);
    expect(isNewIncident(0, 1000, 1000)).toBe(false);
    expect(isNewIncident(0, 1001, 1000)).toBe(true);
    const { alerts, sent, advance } = rig();
    alerts.raise('crash_loop', 'exited 4 times');
    advance(900);
    alerts.raise('crash_loop', 'exited 5 times');
    advance(900);
    alerts.raise('crash_loop', 'exited 6 times');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain('demo: Claude keeps crashing');
    // Another kind is its own incident.
    alerts.raise('auth', 'API 401');
    expect(sent).toHaveLength(2);
    advance(1500);
    alerts.raise('crash_loop', 'again, after a quiet spell');
    expect(sent).toHaveLength(3);
  });

  it('429s alert only as a burst within a minute', () => {
    const { alerts, sent, advance } = rig();
    for (let i = 0; i < 4; i++) {
      alerts.tooManyRequests();
      advance(20_000);
    }
    expect(sent).toHaveLength(0); // spread over more than a minute
    for (let i = 0; i < 5; i++) alerts.tooManyRequests();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain('429');
  });

  // The rules that turn the bridge's events, the bot's results and polling's health into alerts were
  // written inline in compose.ts (issue 28); they are the alerts' own now, table by table.
  it("which of the bridge's operator events alert: crash loops, logins, silent turns, and any of no chat", () => {
    const cases: [FrameOf<'operator_event'>, boolean][] = [
      [{ type: 'operator_event', kind: 'crash_loop', message: 'exited 4 times' }, true],
      [{ type: 'operator_event', kind: 'auth', message: 'login expired' }, true],
      [{ type: 'operator_event', kind: 'stuck', message: 'silent', route: { chatId: 7 } }, true],
      [{ type: 'operator_event', kind: 'cli_exited', message: 'no conversation' }, true],
      [{ type: 'operator_event', kind: 'api_error', message: 'one chat', route: { chatId: 7 } }, false],
    ];
    for (const [event, alerted] of cases) {
      const { alerts, sent } = rig();
      alerts.operatorEvent(event);
      expect([event.message, sent.length]).toEqual([event.message, alerted ? 1 : 0]);
    }
  });

  it('call results count their 429s; a polling conflict alerts, other polling trouble does not', () => {
    const { alerts, sent } = rig();
    for (let i = 0; i < 4; i++) alerts.callResult({ ok: false, error_code: 429 });
    alerts.callResult({ ok: false, error_code: 400 });
    alerts.callResult({ ok: true });
    expect(sent).toHaveLength(0);
    alerts.callResult({ ok: false, error_code: 429 });
    expect(sent).toHaveLength(1);
    alerts.pollingHealth({ ok: false, error: 'network down' });
    expect(sent).toHaveLength(1);
    alerts.pollingHealth({ ok: false, error: 'conflict: another poller' });
    expect(sent).toHaveLength(2);
  });

  it('a nearly full disk alerts; without an alert chat nothing is sent', () => {
    const full = rig({ free: () => 0.01 });
    full.alerts.checkDisk();
    expect(full.sent[0]).toContain('the disk is nearly full');
    const quiet = rig({ free: () => 0.01, chat: undefined });
    quiet.alerts.checkDisk();
    quiet.alerts.raise('stuck', 'silent');
    expect(quiet.sent).toHaveLength(0);
  });

  it("the bridge's crash loop reaches the alert chat once, however often it is reported", async () => {
    const probe = await startWorld();
    const adminChat = probe.tg.createGroup({ title: 'ops', supergroup: true }).id;
    await probe.close();
    // Group ids are deterministic in a fresh sandbox.
    const world = await startWorld({ alertChat: { chatId: adminChat } });
    expect(world.tg.createGroup({ title: 'ops', supergroup: true }).id).toBe(adminChat);
    const bridge = await connectBridge(world.socketPath);
    for (let i = 0; i < 3; i++) {
      await bridge.send({ type: 'operator_event', kind: 'crash_loop', message: `exited ${i + 4} times` });
    }
    await waitUntil(() => botMessages(world.tg, adminChat).length > 0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const alerts = botMessages(world.tg, adminChat).map((m) => m.text);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toContain('Claude keeps crashing');
  });
});
