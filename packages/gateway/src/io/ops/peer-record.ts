/**
 * What the gateway knows of its bridge's connection, kept in `<stateDir>/bridge-peer.json` for the
 * operator's commands, which read the agent from the outside (`switchyard status`, `doctor`): whether a
 * bridge is connected and since when, which release on which host it runs (its handshake says), the
 * last round trip of a ping over the channel (through the ssh link when the bridge is on another host),
 * and the last peer refused at its handshake — a bridge of another release is otherwise only a line in
 * this gateway's log, on a host the operator may not be looking at.
 *
 * Ownership: this module alone writes the file, whole, by rename (a reader never sees half of it); a
 * round trip rewrites it at most once per {@link ROUND_TRIP_WRITE_MS}, a change of connection or a
 * refusal at once. A failed write is logged and the gateway goes on: the file is for people.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Clock, describeError, type Logger, type ProtocolErrorCode } from '@switchyard/protocol';

/** The file's name in the gateway's state directory. */
export const PEER_RECORD_FILE = 'bridge-peer.json';

/** A round trip is written no more often than this: pings come every 5 s. */
export const ROUND_TRIP_WRITE_MS = 10_000;

/** The file's content (epoch ms throughout). */
export interface PeerRecord {
  connected: boolean;
  /** When `connected` last changed (or the gateway started). */
  since: number;
  /** The bridge connected now, or last, as its handshake named it. */
  peer?: { instanceId: string; release?: string; host?: string };
  /** The last ping's round trip over the channel, and when it was measured. */
  roundTrip?: { ms: number; at: number };
  /** The last peer this gateway refused at its handshake, in the words it was sent. */
  refused?: { code: ProtocolErrorCode; message: string; at: number };
  /** The gateway's pid, so a reader can tell a record of a gateway that is gone. */
  pid: number;
}

/** The record's writer. */
export interface PeerRecorder {
  connection(change: {
    connected: boolean;
    peerInstanceId?: string;
    peerRelease?: string;
    peerHost?: string;
  }): void;
  roundTrip(ms: number): void;
  refused(refusal: { code: ProtocolErrorCode; message: string }): void;
}

/** Creates the writer; it writes the file once now (not connected) and then on each change. */
export function createPeerRecorder(options: {
  stateDir: string;
  clock: Clock;
  logger: Logger;
}): PeerRecorder {
  const file = path.join(options.stateDir, PEER_RECORD_FILE);
  const { clock } = options;
  let record: PeerRecord = { connected: false, since: clock.now(), pid: process.pid };
  let written = 0;
  const write = (): void => {
    written = clock.now();
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
      renameSync(tmp, file);
    } catch (err) {
      options.logger.warn(
        { event: 'peer_record_failed', err: describeError(err) },
        'cannot write the peer record',
      );
    }
  };
  write();
  return {
    connection(change) {
      // The peer stays named after it is gone (the last one); its round trip does not.
      const peer =
        change.connected && change.peerInstanceId !== undefined
          ? {
              instanceId: change.peerInstanceId,
              ...(change.peerRelease !== undefined ? { release: change.peerRelease } : {}),
              ...(change.peerHost !== undefined ? { host: change.peerHost } : {}),
            }
          : record.peer;
      const { roundTrip: _gone, peer: _replaced, ...rest } = record;
      record = { ...rest, ...(peer ? { peer } : {}), connected: change.connected, since: clock.now() };
      write();
    },
    roundTrip(ms) {
      const first = record.roundTrip === undefined;
      record = { ...record, roundTrip: { ms, at: clock.now() } };
      if (first || clock.now() - written >= ROUND_TRIP_WRITE_MS) write();
    },
    refused(refusal) {
      record = { ...record, refused: { code: refusal.code, message: refusal.message, at: clock.now() } };
      write();
    },
  };
}

/**
 * The record in `stateDir`, or undefined when there is none or it cannot be read as one. A record whose
 * gateway is gone (its pid runs no more) says not connected, whatever it said when that gateway wrote it.
 */
export function readPeerRecord(stateDir: string): PeerRecord | undefined {
  let value: PeerRecord;
  try {
    value = JSON.parse(readFileSync(path.join(stateDir, PEER_RECORD_FILE), 'utf8')) as PeerRecord;
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || typeof value.connected !== 'boolean') return undefined;
  return value.connected && !running(value.pid) ? { ...value, connected: false } : value;
}

function running(pid: unknown): boolean {
  if (typeof pid !== 'number') return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user (the gateway's, read by root or the operator).
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
