import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReplyText } from '../src/core/reply/reply-text.js';

/** The rule ReplyText implements, written the slow, obvious way. */
function naive(ops: readonly Op[]): string {
  const order: string[] = [];
  const live = new Map<string, string>();
  const final = new Map<string, string>();
  for (const op of ops) {
    if (!order.includes(op.id)) order.push(op.id);
    if (op.kind === 'block') final.set(op.id, op.text);
    else if (!final.has(op.id)) live.set(op.id, (live.get(op.id) ?? '') + op.text);
  }
  return order
    .map((id) => final.get(id) ?? live.get(id) ?? '')
    .filter((t) => t.length > 0)
    .join('\n\n');
}

type Op = { kind: 'delta' | 'block'; id: string; text: string };

describe('ReplyText', () => {
  it('joins blocks in the order they began, authoritative text over deltas, empty blocks left out', () => {
    const reply = new ReplyText();
    reply.delta('a', 'Hel');
    reply.delta('a', 'lo');
    expect(reply.text).toBe('Hello');
    reply.delta('b', '');
    expect(reply.text).toBe('Hello');
    reply.delta('b', 'World');
    expect(reply.text).toBe('Hello\n\nWorld');
    reply.block('a', 'Hello!');
    expect(reply.text).toBe('Hello!\n\nWorld');
    // A late delta for a block whose text is final is stale.
    expect(reply.delta('a', ' stale')).toBe(false);
    expect(reply.text).toBe('Hello!\n\nWorld');
    reply.block('b', 'World.');
    expect(reply.delta('b', 'x')).toBe(false);
    expect(reply.text).toBe('Hello!\n\nWorld.');
  });

  it('starts from the blocks a restarted gateway kept', () => {
    const reply = new ReplyText([
      { id: 'a', text: 'First.' },
      { id: 'b', text: '' },
    ]);
    reply.delta('c', 'Third');
    expect(reply.text).toBe('First.\n\nThird');
  });

  it('says what the obvious rule says, for any order of deltas, blocks and reads', () => {
    const op = fc.record({
      kind: fc.constantFrom('delta' as const, 'delta' as const, 'block' as const),
      id: fc.constantFrom('a', 'b', 'c'),
      text: fc.string({ maxLength: 6 }),
    });
    fc.assert(
      fc.property(fc.array(fc.tuple(op, fc.boolean()), { maxLength: 40 }), (steps) => {
        const reply = new ReplyText();
        const done: Op[] = [];
        for (const [o, read] of steps) {
          if (o.kind === 'block') reply.block(o.id, o.text);
          else reply.delta(o.id, o.text);
          done.push(o);
          if (read) expect(reply.text).toBe(naive(done));
        }
        expect(reply.text).toBe(naive(done));
      }),
      { numRuns: 2000 },
    );
  });
});
