/**
 * The bridge as a real child process (`bridge-entry.mjs`, from `dist/`), for tests that kill it with
 * SIGKILL: start it against a rig, optionally with a kill point inside a stdin write, keep its log lines,
 * and tell which reliable frames the gateway side received more than once.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { type AppFrame, RELIABLE_TYPES } from '@switchyard/protocol';
import type { DeliveryStage } from '../../packages/agent-bridge/src/io/delivery/delivery.js';
import type { BridgeOptions } from '../../packages/agent-bridge/src/options.js';
import { bridgeOptions, type Rig } from './harness.js';

/** Builds the package so `bridge-entry.mjs` runs the code under test. */
export function buildBridge(): void {
  execFileSync(process.execPath, [
    join(import.meta.dirname, '../../node_modules/typescript/bin/tsc'),
    '-b',
    join(import.meta.dirname, '../../packages/agent-bridge'),
  ]);
}

/** One bridge process. `logs` holds its parsed log lines (stderr, JSON), from every start so far. */
export interface BridgeProcess {
  readonly child: ChildProcess;
  /** Resolves when the process has exited (by a kill point, `kill()`, or by itself). */
  readonly exited: Promise<void>;
  /** SIGKILL, and wait for the exit; nothing if it is gone already. */
  kill(): Promise<void>;
}

/** Options of {@link startBridge}. */
export interface StartOptions {
  /** The bridge kills itself (SIGKILL) at this stage of the write with this key. */
  killAt?: { stage: DeliveryStage; key: string };
  /** Receives each log line the bridge writes. */
  onLog?: (entry: Record<string, unknown>) => void;
  /** Bridge options over the rig's (JSON-serialisable ones only: they cross a process boundary). */
  bridge?: Partial<BridgeOptions>;
}

/**
 * Starts a bridge on the rig's state directory; resolves once `start()` has returned in it — or, with a
 * kill point, possibly never: then `exited` tells. Rejects if it exits before it started without one.
 */
export async function startBridge(rig: Rig, options: StartOptions = {}): Promise<BridgeProcess> {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'bridge-entry.mjs')], {
    env: {
      ...process.env,
      BRIDGE_OPTIONS: JSON.stringify(bridgeOptions(rig, { restartOnExit: true, ...options.bridge })),
      ...(options.killAt ? { BRIDGE_KILL_AT: JSON.stringify(options.killAt) } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let rest = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    rest += chunk;
    for (let nl = rest.indexOf('\n'); nl >= 0; nl = rest.indexOf('\n')) {
      const line = rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      try {
        options.onLog?.(JSON.parse(line) as Record<string, unknown>);
      } catch {
        process.stderr.write(`${line}\n`);
      }
    }
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    child.once('exit', (code, signal) => reject(new Error(`bridge exited with ${code ?? signal}`)));
  });
  return {
    child,
    exited,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Whether a pid is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Reliable frames the gateway side received more than once (statuses may legitimately recur). */
export function duplicates(frames: readonly AppFrame[]): string[] {
  const seen = new Set<string>();
  const dup: string[] = [];
  for (const frame of frames) {
    if (!RELIABLE_TYPES.has(frame.type) || frame.type === 'status' || frame.type === 'operator_event')
      continue;
    const { seq: _seq, ...rest } = frame as AppFrame & { seq?: number };
    const key = JSON.stringify(rest);
    if (seen.has(key)) dup.push(key);
    seen.add(key);
  }
  return dup;
}
