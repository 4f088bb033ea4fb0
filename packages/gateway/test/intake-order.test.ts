/**
 * The durable source and the handlers of the batch it just returned: the next poll is prepared only
 * after those handlers have run as far as promise continuations take them (in the gateway: the inbox
 * row and the frame on the bridge's socket), so a message does not wait behind the next HTTP request.
 */

import { silentLogger } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { createUpdateSource } from '../src/io/intake/intake.js';

describe('createUpdateSource', () => {
  it("a batch's handlers run to their first real wait before the next getUpdates is asked for", async () => {
    const events: string[] = [];
    let next = 1;
    const source = createUpdateSource({
      api: {
        getUpdates: async () => {
          events.push('getUpdates');
          return [{ update_id: next++ }];
        },
      },
      store: { nextUpdateOffset: () => next, recordUpdates: (records) => records.map((r) => r.updateId) },
      keep: () => true,
      logger: silentLogger,
    });
    const signal = new AbortController().signal;
    const first = await source({ limit: 100 }, signal);
    expect(first.map((u) => u.update_id)).toEqual([1]);
    // As the runner does: the handler starts, and the next batch is asked for at once.
    const handler = (async () => {
      for (let hop = 0; hop < 50; hop++) await Promise.resolve();
      events.push('handler reached the socket');
    })();
    const second = source({ limit: 100 }, signal);
    await Promise.all([handler, second]);
    expect(events).toEqual(['getUpdates', 'handler reached the socket', 'getUpdates']);
  });
});
