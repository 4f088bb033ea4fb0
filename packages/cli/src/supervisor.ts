/**
 * The development supervisor behind `switchyard run AGENT` (and the sandbox): the gateway and the
 * bridge as two child processes, as systemd would run them, so that a bridge restart here is the same
 * event as in production. The bridge is restarted whenever it exits (with backoff when it keeps
 * failing); the gateway asks for a bridge restart over the IPC channel (`/restart`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { describeError, type Logger } from '@switchyard/protocol';

/** How the supervisor starts each service, and what it does after a real stop. */
export interface SupervisorOptions {
  /** argv (after `node`) that starts a service: `[main.js, '--config', file, service, agent]`. */
  command(service: 'gateway' | 'bridge'): string[];
  /** Each service's environment (default: this process's). */
  env?(service: 'gateway' | 'bridge'): NodeJS.ProcessEnv;
  logger: Logger;
  /** Called after the bridge has been stopped for good (a real stop: the Claude process too). */
  onShutdown?(): Promise<void>;
}

/** Message the gateway sends over IPC to have the bridge restarted. */
export const RESTART_BRIDGE_MESSAGE = 'switchyard:restart-bridge';

interface Service {
  name: 'gateway' | 'bridge';
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
}

/** Creates the supervisor; nothing runs until `start()`. */
export function createSupervisor(options: SupervisorOptions): Supervisor {
  const log = options.logger.child({ component: 'supervisor' });
  let stopping = false;
  const services: Record<'gateway' | 'bridge', Service> = {
    gateway: { name: 'gateway', child: undefined, startedAt: 0, failures: 0, timer: undefined },
    bridge: { name: 'bridge', child: undefined, startedAt: 0, failures: 0, timer: undefined },
  };

  const launch = (service: Service): void => {
    service.timer = undefined;
    if (stopping) return;
    const child = spawn(process.execPath, options.command(service.name), {
      env: options.env?.(service.name) ?? process.env,
      stdio:
        service.name === 'gateway'
          ? ['ignore', 'inherit', 'inherit', 'ipc']
          : ['ignore', 'inherit', 'inherit'],
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
    const bridge = services.bridge;
    bridge.failures = 0;
    if (bridge.child) bridge.child.kill('SIGTERM');
    else if (!bridge.timer) launch(bridge);
  };

  return {
    start() {
      launch(services.gateway);
      launch(services.bridge);
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
