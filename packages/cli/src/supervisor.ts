/**
 * The development supervisor behind `switchyard run AGENT` (and the sandbox): the gateway and the
 * bridge as two child processes, as systemd would run them, so that a bridge restart here is the same
 * event as in production. The bridge is restarted whenever it exits (with backoff when it keeps
 * failing); the gateway asks for a bridge restart over the IPC channel (`/restart`).
 *
 * For an agent whose bridge runs on another host (`bridge:` in its config) the second service is its
 * link (`switchyard link`, the ssh client that carries the socket there) instead of its bridge.
 *
 * Exit status 2 is the one exit a restart cannot cure: `switchyard` uses it for a refused config or
 * command line (a token variable unset, a credential that cannot be read, an unknown agent). A service
 * that exits 2 is not restarted; the supervisor stops the other one and reports the refusal through
 * {@link Supervisor.refused}, so `run`, `up` and the sandbox end with the service's message and status 2
 * instead of retrying every 0.5 … 30 s forever.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { describeError, type Logger } from '@switchyard/protocol';

/** A service the supervisor runs: the gateway, and beside it the bridge or, for a remote bridge, the link. */
export type ServiceName = 'gateway' | 'bridge' | 'link';

/** How the supervisor starts each service, and what it does after a real stop. */
export interface SupervisorOptions {
  /** argv (after `node`) that starts a service: `[main.js, '--config', file, service, agent]`. */
  command(service: ServiceName): string[];
  /** Each service's environment (default: this process's). */
  env?(service: ServiceName): NodeJS.ProcessEnv;
  /** The gateway's partner here: `bridge` (default), or `link` when the bridge runs on another host. */
  peer?: 'bridge' | 'link';
  logger: Logger;
  /** Called after the bridge has been stopped for good (a real stop: the Claude process too). */
  onShutdown?(): Promise<void>;
}

/** The exit status of a service whose config (or command line) is refused: restarting cannot help. */
export const REFUSED_EXIT_STATUS = 2;

/** A service ended the pair by refusing its config; `message` is the end of what it wrote on stderr. */
export interface SupervisorRefusal {
  service: ServiceName;
  message: string;
}

/** Message the gateway sends over IPC to have the bridge restarted. */
export const RESTART_BRIDGE_MESSAGE = 'switchyard:restart-bridge';

interface Service {
  name: ServiceName;
  child: ChildProcess | undefined;
  startedAt: number;
  failures: number;
  timer: NodeJS.Timeout | undefined;
}

/** The running pair of services. */
export interface Supervisor {
  start(): void;
  /** Stops both services; resolves when both processes have exited. */
  stop(): Promise<void>;
  /**
   * Settles when a service exited with {@link REFUSED_EXIT_STATUS}; the other service is being stopped
   * by then (call `stop()` to wait for it). Never settles once `stop()` was called first.
   */
  readonly refused: Promise<SupervisorRefusal>;
}

/** How much of a service's stderr is kept to report a refusal: its last few lines. */
const STDERR_TAIL_CHARS = 4_000;

/** Creates the supervisor; nothing runs until `start()`. */
export function createSupervisor(options: SupervisorOptions): Supervisor {
  const log = options.logger.child({ component: 'supervisor' });
  let stopping = false;
  let refuse: (refusal: SupervisorRefusal) => void = () => {};
  const refused = new Promise<SupervisorRefusal>((resolve) => {
    refuse = resolve;
  });
  const peer = options.peer ?? 'bridge';
  const services: Record<'gateway' | 'peer', Service> = {
    gateway: { name: 'gateway', child: undefined, startedAt: 0, failures: 0, timer: undefined },
    peer: { name: peer, child: undefined, startedAt: 0, failures: 0, timer: undefined },
  };

  const launch = (service: Service): void => {
    service.timer = undefined;
    if (stopping) return;
    // stderr is passed through as it comes, and its tail kept: it holds the message of a refusal.
    const child = spawn(process.execPath, options.command(service.name), {
      env: options.env?.(service.name) ?? process.env,
      stdio:
        service.name === 'gateway' ? ['ignore', 'inherit', 'pipe', 'ipc'] : ['ignore', 'inherit', 'pipe'],
    });
    let stderrTail = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      stderrTail = (stderrTail + chunk.toString()).slice(-STDERR_TAIL_CHARS);
    });
    service.child = child;
    service.startedAt = Date.now();
    log.info(
      { event: 'service_started', service: service.name, childPid: child.pid },
      `${service.name} started`,
    );
    child.on('message', (message) => {
      if (message === RESTART_BRIDGE_MESSAGE) {
        log.info({ event: 'restart_requested', by: service.name }, 'restarting the bridge on request');
        restartBridge();
      }
    });
    child.on('error', (err) =>
      log.error({ event: 'spawn_failed', service: service.name, err: describeError(err) }, 'spawn failed'),
    );
    child.on('exit', (code, signal) => {
      if (service.child === child) service.child = undefined;
      if (stopping) return;
      if (code === REFUSED_EXIT_STATUS) {
        stopping = true;
        log.error(
          { event: 'service_refused', service: service.name, code },
          `${service.name} refused its config; not restarting it`,
        );
        for (const other of Object.values(services)) {
          if (other.timer) clearTimeout(other.timer);
          other.child?.kill('SIGTERM');
        }
        // The exit can come before the last of stderr has been read: wait for the pipe (briefly).
        const drained = child.stderr
          ? Promise.race([
              new Promise((resolve) => child.stderr?.once('close', resolve)),
              new Promise((resolve) => setTimeout(resolve, 200)),
            ])
          : Promise.resolve();
        void drained.then(() =>
          refuse({
            service: service.name,
            message: stderrTail.trim() || `the ${service.name} exited with status ${code}`,
          }),
        );
        return;
      }
      // A service that ran for a minute was healthy: its next failure starts the backoff afresh.
      service.failures = Date.now() - service.startedAt > 60_000 ? 0 : service.failures + 1;
      const delay = Math.min(30_000, service.failures === 0 ? 0 : 500 * 2 ** (service.failures - 1));
      log.warn(
        { event: 'service_exited', service: service.name, code, signal, restartInMs: delay },
        `${service.name} exited; restarting`,
      );
      service.timer = setTimeout(() => launch(service), delay);
    });
  };

  const exited = (child: ChildProcess | undefined): Promise<void> =>
    !child || child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise((resolve) => child.once('exit', () => resolve()));

  const restartBridge = (): void => {
    const bridge = services.peer;
    if (bridge.name !== 'bridge') {
      log.warn({ event: 'restart_elsewhere' }, 'the bridge runs on another host: restart it there');
      return;
    }
    bridge.failures = 0;
    if (bridge.child) bridge.child.kill('SIGTERM');
    else if (!bridge.timer) launch(bridge);
  };

  return {
    refused,
    start() {
      launch(services.gateway);
      launch(services.peer);
    },
    async stop() {
      stopping = true;
      for (const service of Object.values(services)) {
        if (service.timer) clearTimeout(service.timer);
        service.child?.kill('SIGTERM');
      }
      const kill = setTimeout(() => {
        for (const service of Object.values(services)) service.child?.kill('SIGKILL');
      }, 10_000);
      await Promise.all(Object.values(services).map((service) => exited(service.child)));
      clearTimeout(kill);
      await options.onShutdown?.();
    },
  };
}

/** The last line of a refused run: which service gave up, and that nothing will retry it. */
export function refusalText(agent: string, refusal: SupervisorRefusal): string {
  return `switchyard: the ${refusal.service} of agent "${agent}" refused the config and was not restarted: fix what it said above (${firstLine(refusal.message)}) and start again`;
}

function firstLine(text: string): string {
  return text.split('\n').find((line) => line.trim() !== '') ?? text;
}
