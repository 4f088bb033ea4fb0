/**
 * The card driver's mapping from bridge frames to card events: what the card can show depends on what
 * the mapping keeps. It dropped the model's thought, so `think` showed "💭 Thinking…" and never what was
 * thought (issue 31).
 */
import { describe, expect, it } from 'vitest';
import { toCardEvent } from '../src/io/card/card-driver.js';

describe('toCardEvent', () => {
  it("keeps the model's thought for the card to show", () => {
    expect(toCardEvent({ type: 'thinking', turnId: 't', text: 'weigh two ways' }, 5)).toEqual({
      type: 'thinking',
      at: 5,
      text: 'weigh two ways',
    });
  });

  it('maps a prompt and its close onto the wait the card shows', () => {
    expect(toCardEvent({ type: 'prompt_closed', requestId: 'r', reason: 'answered' }, 7)).toEqual({
      type: 'permission_answered',
      at: 7,
      requestId: 'r',
    });
  });
});
