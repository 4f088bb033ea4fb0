/**
 * The gateway's record of its bridge's connection (`io/ops/peer-record.ts`), which `switchyard status`
 * and `doctor` read from outside: the peer named, the round trip kept fresh without a write per ping,
 * a refusal at the handshake kept with its words, and the round trip forgotten when the bridge is gone.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { silentLogger, systemClock } from '@switchyard/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createPeerRecorder,
  PEER_RECORD_FILE,
  ROUND_TRIP_WRITE_MS,
  readPeerRecord,
} from '../../src/io/ops/peer-record.js';

describe('the peer record', () => {
  let dir: string;
  let now = 1_000_000;
  const clock = { ...systemClock, now: () => now };
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sy-peer-'));
    now = 1_000_000;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('names the connected bridge, writes its first round trip at once and later ones at most every 10 s', () => {
    const recorder = createPeerRecorder({ stateDir: dir, clock, logger: silentLogger });
    expect(readPeerRecord(dir)).toMatchObject({ connected: false, since: 1_000_000, pid: process.pid });
    now += 1_000;
    recorder.connection({
      connected: true,
      peerInstanceId: 'b1',
      peerRelease: '0.1.0',
      peerHost: 'build-box',
    });
    expect(readPeerRecord(dir)).toMatchObject({
      connected: true,
      since: 1_001_000,
      peer: { instanceId: 'b1', release: '0.1.0', host: 'build-box' },
    });
    now += 5_000;
    recorder.roundTrip(3);
    expect(readPeerRecord(dir)?.roundTrip).toEqual({ ms: 3, at: 1_006_000 });
    now += 5_000;
    recorder.roundTrip(4);
    expect(readPeerRecord(dir)?.roundTrip?.ms).toBe(3);
    now += ROUND_TRIP_WRITE_MS;
    recorder.roundTrip(5);
    expect(readPeerRecord(dir)?.roundTrip).toEqual({ ms: 5, at: now });
  });

  it('keeps a refusal with its words, and forgets the round trip (not the peer) when the bridge goes', () => {
    const recorder = createPeerRecorder({ stateDir: dir, clock, logger: silentLogger });
    recorder.connection({ connected: true, peerInstanceId: 'b1', peerHost: 'build-box' });
    recorder.roundTrip(2);
    now += 1_000;
    recorder.connection({ connected: false });
    const gone = readPeerRecord(dir);
    expect(gone).toMatchObject({
      connected: false,
      since: now,
      peer: { instanceId: 'b1', host: 'build-box' },
    });
    expect(gone?.roundTrip).toBeUndefined();
    recorder.refused({
      code: 'version_mismatch',
      message: 'protocol version 9 is not supported by this gateway',
    });
    expect(readPeerRecord(dir)?.refused).toEqual({
      code: 'version_mismatch',
      message: 'protocol version 9 is not supported by this gateway',
      at: now,
    });
  });

  it('says not connected when the gateway that wrote it is gone, not what it said then', () => {
    writeFileSync(
      path.join(dir, PEER_RECORD_FILE),
      JSON.stringify({
        connected: true,
        since: 1,
        pid: 2 ** 22 + 1,
        peer: { instanceId: 'b', host: 'build-box' },
      }),
    );
    expect(readPeerRecord(dir)).toMatchObject({ connected: false, peer: { host: 'build-box' } });
  });

  it('reads nothing from a missing or foreign file', () => {
    expect(readPeerRecord(dir)).toBeUndefined();
    expect(readPeerRecord(path.join(dir, 'nowhere'))).toBeUndefined();
  });
});
