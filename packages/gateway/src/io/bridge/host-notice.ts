/**
 * The shell of `core/bridge/host-outage.ts`: told of the bridge's connection and of every user message,
 * it sends the "host unreachable" notice to each waiting conversation once per outage, after the grace,
 * on one wake timer. Only for a bridge on another host (`GatewayOptions.remoteBridge`); a local bridge's
 * restart is the "agent restarting" case the reactions already show.
 */
import { type Clock, createWakeTimer, type FrameOf, type Route } from '@switchyard/protocol';
import {
  connectionChanged,
  dueNotices,
  type HostOutage,
  hostUnreachableText,
  messageCame,
  startOutage,
} from '../../core/bridge/host-outage.js';
import { laneKey } from '../../core/intake/route.js';

/** How long the host may be unreachable before the waiting chats are told (default). */
export const HOST_NOTICE_GRACE_MS = 30_000;

/** What the notice needs. */
export interface HostNoticeOptions {
  /** Where the bridge runs, as the chat reads it (`user@host`). */
  host: string;
  /** How long the host may be unreachable before the waiting chats are told; default {@link HOST_NOTICE_GRACE_MS}. */
  unreachableNoticeMs?: number | undefined;
  clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>;
  /** Sends a text to a conversation (never rejects). */
  reply(route: Route, text: string): unknown;
}

/** The notice's inputs. */
export interface HostNotice {
  connection(connected: boolean): void;
  message(route: Route): void;
  /** `send` for user messages, each noted (`message`) on its way to the bridge. */
  watching(
    send: (frame: FrameOf<'user_message'>) => Promise<void>,
  ): (frame: FrameOf<'user_message'>) => Promise<void>;
  stop(): void;
}

/** Creates the notice, in an outage from now (no bridge has connected yet). */
export function createHostNotice(options: HostNoticeOptions): HostNotice {
  const { clock } = options;
  const graceMs = options.unreachableNoticeMs ?? HOST_NOTICE_GRACE_MS;
  const routes = new Map<string, Route>();
  let state: HostOutage = startOutage(clock.now());
  const look = (now: number): void => {
    const due = dueNotices(state, now, graceMs);
    state = due.state;
    for (const key of due.tell) {
      const route = routes.get(key);
      if (route) options.reply(route, hostUnreachableText(options.host));
    }
    timer.set(due.wakeAt);
  };
  const timer = createWakeTimer(clock, look);
  const notice: HostNotice = {
    connection(connected) {
      state = connectionChanged(state, connected, clock.now());
      if (connected) routes.clear();
      look(clock.now());
    },
    message(route) {
      const key = laneKey(route);
      routes.set(key, route);
      state = messageCame(state, key);
      look(clock.now());
    },
    watching: (send) => (frame) => {
      notice.message(frame.route);
      return send(frame);
    },
    stop: () => timer.stop(),
  };
  return notice;
}
