/**
 * The gateway's wiring as issues 18 and 28 ask for it: options in a module that imports only types, one
 * composition step, `gateway.ts` only lifecycle, no service handed out through a getter, each decision
 * in one place, and data paths on which no step calls back into a module the path has crossed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');
const read = (file: string): string => readFileSync(join(SRC, file), 'utf8');
const shells = readdirSync(SRC, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.ts'));

describe('gateway wiring', () => {
  it('options.ts imports types only', () => {
    const imports = read('options.ts').match(/^import .*$/gm) ?? [];
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((line) => !line.startsWith('import type '))).toEqual([]);
  });

  it('gateway.ts is the lifecycle only: about 150 lines, building no service itself', () => {
    const text = read('gateway.ts');
    expect(text.split('\n').length).toBeLessThanOrEqual(150);
    expect(text.match(/\bcreate(?!Gateway)[A-Z]\w*\(/g) ?? []).toEqual([]);
  });

  it('no module hands services out through ready(), live() or db() getters', () => {
    const getters = /\bdb\(\)|\bready\s*[(:]|live\(\)\s*\?\.|live\(\):\s*\|/;
    expect(shells.filter((f) => getters.test(read(f)))).toEqual([]);
  });

  // The turns looked a frame's owner up again after the dispatch had (issue 28): one decision, one place.
  it("a frame's owner is looked up in one place: only the dispatch reads the owner table", () => {
    const table = join('core', 'bridge', 'frame-owner.ts');
    const readers = shells.filter((f) => f !== table && /\b(FRAME_OWNER|ownerOf)\b/.test(read(f)));
    expect(readers).toEqual([join('io', 'bridge', 'bridge-frames.ts')]);
  });

  // The boot re-sent the inbox with a copy of the forward (budget, channel, a refusal reported): one now.
  it("a user's message reaches the bridge one way: only the forward reports a frame not forwarded", () => {
    const callers = shells.filter((f) => /\breportNotForwarded\(/.test(read(f)));
    expect(callers.filter((f) => f !== join('core', 'intake', 'message-fit.ts'))).toEqual([
      join('io', 'bridge', 'forward.ts'),
    ]);
  });

  // A budget's refusal was fed back into the turns from the forward, after the turn machine had taken the
  // message (issue 28): the one step of the first data path that called back into a module it had
  // crossed. The budget is asked first now, and the machine gets its verdict with the message.
  it("today's budget is asked before the turn machine takes a message, and nothing after it calls back into the turns", () => {
    const code = (file: string): string => read(file).replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    // The hand-over to the bridge knows no budget.
    expect(code(join('io', 'bridge', 'forward.ts'))).not.toMatch(/budget|spend/i);
    // Both ways a message enters weigh it, hand the machine the verdict, then forward an admitted one.
    for (const entry of [
      join('io', 'intake', 'telegram-handlers.ts'),
      join('io', 'automation', 'inject.ts'),
    ]) {
      const text = code(entry);
      const weighed = text.search(/options\.budget\(/);
      const arrived = text.search(/turns\.arrive\(row, budget\)/);
      const forwarded = text.search(/budget\.admit === true\) options\.forward\(/);
      expect({
        entry,
        weighed: weighed > -1,
        arrived: arrived > weighed,
        forwarded: forwarded > arrived,
      }).toEqual({
        entry,
        weighed: true,
        arrived: true,
        forwarded: true,
      });
    }
    // The weighing of a message the machine is about to take never calls into the turns.
    const ledger = code(join('io', 'spend', 'spend-ledger.ts'));
    const weigh = ledger.slice(ledger.indexOf('const weigh ='), ledger.indexOf('const offer ='));
    expect(weigh).toMatch(/^const weigh =/);
    expect(weigh).not.toMatch(/turns\./);
  });

  // Whether the server lacks rich messages was the reply factory's (issue 28), so every message crossed
  // it for that one fact when its presentation was decided; it is the run's knowledge of the server now.
  it('what the Bot API server lacks is kept in one place: io/telegram/server-parts.ts', () => {
    const keeps = /\blet\s+\w*[mM]issing\b|\blet\s+parts\b/;
    expect(shells.filter((f) => keeps.test(read(f)))).toEqual([join('io', 'telegram', 'server-parts.ts')]);
  });

  // The metrics wrapped the frame dispatch (issue 28), so every delta passed through io/ops/metrics.ts on
  // its way to the turns; they see the frames beside that way now, told by the endpoint.
  it("no module wraps the bridge's frame dispatch: the endpoint's receiver is the dispatch itself", () => {
    expect(shells.filter((f) => /\bobserveFrames\b|\bonFrame:\s*\w+\.\w+\(/.test(read(f)))).toEqual([]);
    expect(read('compose.ts')).toMatch(/const onFrame = createFrameDispatch\(/);
  });

  // Five shells kept a single timer of their own beside the protocol's createWakeTimer (issue 28): the
  // schedules, then the alerts' and the retention's periods, the reply's next draft (cleared when its
  // machine wants no wake-up: `set`) and the transcriber's deadline. Every one is on the wake timer now.
  it('no shell keeps a timer of its own beside the wake timer', () => {
    const own = shells.filter((f) => /\blet timer\b/.test(read(f))).sort();
    expect(own).toEqual([]);
  });

  // Whether a reply is a draft, rich edits or classic was worked out in four places (issue 28): the reply
  // factory, the arrival, the inbound ledger and the turn machine. One decision now, carried on the turn.
  it("a reply's presentation is decided in one place, once, and carried: no second place decides it", () => {
    const decision = join('core', 'reply', 'presentation.ts');
    // A conditional that picks a presentation: `? 'draft' :`, `? 'edit' :`, `? 'classic' :` …
    const picks = /\?\s*'(?:draft|edit|classic)'\s*:\s*(?:'(?:draft|edit|classic)'|\w+\s*[?;,)\n])/;
    expect(shells.filter((f) => f !== decision && picks.test(read(f)))).toEqual([]);
    // It is asked once, as a message comes in to the turns; the reply factory has no `mode` of its own.
    expect(shells.filter((f) => /\bdecidePresentation\(/.test(read(f)) && f !== decision)).toEqual([
      join('io', 'turns', 'turns.ts'),
    ]);
    expect(read(join('io', 'turns', 'turns.ts')).match(/\bdecidePresentation\(/g)).toHaveLength(1);
    expect(shells.filter((f) => /\bmode\(route\)|\breplies\.mode\(/.test(read(f)))).toEqual([]);
  });

  // Three pacers (issue 28): the windows, the send budget over them, and two token buckets — the webhooks'
  // and the draft pacer's own arithmetic. The budget is the windows'; every bucket is token-bucket.ts's.
  it('pacing has two shapes, each written once: only pace-windows.ts counts windows, only token-bucket.ts refills', () => {
    const bucket = join('core', 'telegram', 'token-bucket.ts');
    const refills = /\btokens\s*[-+]=|\.tokens\s*\+\s*[\w(]/;
    expect(shells.filter((f) => f !== bucket && refills.test(read(f)))).toEqual([]);
    const windows = join('core', 'telegram', 'pace-windows.ts');
    const counts = /> now - \w+\.periodMs/;
    expect(shells.filter((f) => f !== windows && counts.test(read(f)))).toEqual([]);
  });

  // The turns' shell started acknowledgements and reactions in a queueMicrotask, so the order of a
  // message's requests was the event loop's (issue 28); a step's actions now run in an order it states.
  it('no microtask holds the message path in order: no queueMicrotask in the gateway', () => {
    expect(shells.filter((f) => /\bqueueMicrotask\b/.test(read(f)))).toEqual([]);
  });

  // compose.ts once kept the bridge's connection, its status frames and polling's health in `let`s of
  // its own, and reached the alerts, the endpoint, the settings panel and the schedules from closures
  // written above their declarations (issue 28): the order of the code was not the order of the build.
  it('compose.ts is a declaration: no `let`, and no service named above the line that builds it', () => {
    const text = read('compose.ts');
    const body = text
      .slice(text.indexOf('export function compose('))
      .replace(/\/\/.*$/gm, '')
      .replace(/'[^'\n]*'/g, "''");
    expect(body.match(/^\s*let\s+\w+/gm) ?? []).toEqual([]);
    const declared = [...body.matchAll(/^\s*const (?:\{ ([\w, ]+) \}|(\w+)) =/gm)].flatMap((m) =>
      (m[1] ?? m[2] ?? '').split(',').map((name) => ({ name: name.trim(), at: m.index ?? 0 })),
    );
    const early = declared.filter(({ name, at }) => {
      const first = new RegExp(`(?<![\\w.'])${name}\\b(?!\\s*:)`).exec(body);
      return first !== null && first.index < at;
    });
    expect(early.map((d) => d.name)).toEqual([]);
  });
});
