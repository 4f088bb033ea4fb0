/**
 * Test rig for the bridge against the real CLI: a temp root (config dir, work dir, state dir), a scripted
 * Messages API on 127.0.0.1, and a gateway-side protocol server collecting every frame it receives.
 * `cleanup()` stops everything and kills every claude process the rig's state directory recorded.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AppFrame,
  type ChannelStore,
  createMemoryChannelStore,
  createProtocolServer,
  type Endpoint,
  type FrameOf,
} from '@switchyard/protocol';
import { createScriptedModel, type Rule, type ScriptedModel } from '@switchyard/sandbox';
import { type BridgeOptions, recordedProcesses } from '../../packages/agent-bridge/src/index.js';

export const CLAUDE_BIN = realpathSync(join(import.meta.dirname, '../../node_modules/.bin/claude'));

export interface Rig {
  root: string;
  workDir: string;
  stateDir: string;
  configDir: string;
  socketPath: string;
  model: ScriptedModel;
  server: Endpoint;
  frames: AppFrame[];
  env: NodeJS.ProcessEnv;
  waitFor<T extends AppFrame>(
    predicate: (frame: AppFrame) => frame is T,
    timeoutMs?: number,
    since?: number,
  ): Promise<T>;
  waitFor(predicate: (frame: AppFrame) => boolean, timeoutMs?: number, since?: number): Promise<AppFrame>;
  of<T extends AppFrame['type']>(type: T): FrameOf<T>[];
  send(frame: AppFrame): Promise<void>;
  /** Sends a reliable frame and resolves once the bridge has acknowledged it (handled and recorded). */
  sendAcked(frame: AppFrame, timeoutMs?: number): Promise<void>;
  /** The pid of a Claude process the bridge recorded (the first conversation's with one). */
  recordedPid(): number | undefined;
  cleanup(): Promise<void>;
}

/**
 * Options for a bridge on the rig: its socket, state and work directories, the pinned CLI with the rig's
 * environment, no restart on exit, a watchdog that stays quiet; `overrides` replace any of them.
 */
export function bridgeOptions(rig: Rig, overrides: Partial<BridgeOptions> = {}): BridgeOptions {
  return {
    agent: 'test',
    socketPath: rig.socketPath,
    stateDir: rig.stateDir,
    workDir: rig.workDir,
    claudeBin: CLAUDE_BIN,
    env: rig.env,
    restartOnExit: false,
    stuckAfterMs: 60_000,
    ...overrides,
  };
}

export { userMessage } from '../../packages/agent-bridge/test/frames.js';

export async function createRig(rules: readonly Rule[]): Promise<Rig> {
  // Short: unix socket paths must stay under 107 bytes.
  const root = mkdtempSync(join(tmpdir(), 'sy-'));
  const workDir = join(root, 'w');
  const stateDir = join(root, 's');
  const configDir = join(root, 'c');
  for (const dir of [workDir, stateDir, configDir]) mkdirSync(dir, { recursive: true });
  const socketPath = join(root, 'g.sock');
  const model = createScriptedModel({ script: rules });
  const { baseUrl } = await model.start();
  const frames: AppFrame[] = [];
  const waiters = new Set<() => void>();
  // The gateway side's store, watched: which seq each sent frame got, and how far the bridge acknowledged.
  const inner = createMemoryChannelStore();
  const seqOf = new Map<AppFrame, number>();
  let ackedUpTo = 0;
  const ackWaiters = new Set<() => void>();
  const store: ChannelStore = {
    get streamId() {
      return inner.streamId;
    },
    append(frame) {
      const seq = inner.append(frame);
      seqOf.set(frame, seq);
      return seq;
    },
    acknowledge(upTo) {
      ackedUpTo = Math.max(ackedUpTo, upTo);
      inner.acknowledge(upTo);
      for (const wake of [...ackWaiters]) wake();
    },
    pendingAfter: (after) => inner.pendingAfter(after),
    readPeer: () => inner.readPeer(),
    writePeer: (cursor) => inner.writePeer(cursor),
  };
  const server = createProtocolServer({
    socketPath,
    agent: 'test',
    store,
    onFrame(frame) {
      frames.push(frame);
      for (const wake of [...waiters]) wake();
    },
  });
  await server.start();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: root,
    CLAUDE_CONFIG_DIR: configDir,
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: 'sk-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
  const recordedPid = (): number | undefined => recordedProcesses(stateDir)[0]?.record.pid;
  const pids = new Set<number>();
  const track = setInterval(() => {
    for (const { record } of recordedProcesses(stateDir)) pids.add(record.pid);
  }, 200);
  const waitFor = (
    predicate: (frame: AppFrame) => boolean,
    timeoutMs = 30_000,
    since = 0,
  ): Promise<AppFrame> =>
    new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = frames.slice(since).find(predicate);
        if (found) {
          waiters.delete(check as () => void);
          clearTimeout(timer);
          resolve(found);
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        waiters.delete(check as () => void);
        reject(new Error(`timed out; frames so far: ${frames.map((f) => f.type).join(', ')}`));
      }, timeoutMs);
      if (!check()) waiters.add(check as () => void);
    });
  return {
    root,
    workDir,
    stateDir,
    configDir,
    socketPath,
    model,
    server,
    frames,
    env,
    waitFor: waitFor as Rig['waitFor'],
    of: <T extends AppFrame['type']>(type: T) => frames.filter((f) => f.type === type) as FrameOf<T>[],
    send: (frame) => server.send(frame),
    async sendAcked(frame, timeoutMs = 30_000) {
      await server.send(frame);
      const seq = seqOf.get(frame);
      if (seq === undefined) throw new Error(`${frame.type} is not a reliable frame`);
      await new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (ackedUpTo < seq) return;
          ackWaiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          ackWaiters.delete(check);
          reject(new Error(`${frame.type} seq ${seq} not acknowledged within ${timeoutMs} ms`));
        }, timeoutMs);
        ackWaiters.add(check);
        check();
      });
    },
    recordedPid,
    async cleanup() {
      clearInterval(track);
      for (const { record } of recordedProcesses(stateDir)) pids.add(record.pid);
      for (const p of pids) {
        try {
          process.kill(-p, 'SIGKILL');
        } catch {
          try {
            process.kill(p, 'SIGKILL');
          } catch {
            // gone
          }
        }
      }
      await server.stop();
      await model.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
