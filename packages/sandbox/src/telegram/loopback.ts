/**
 * Whether a request to the sandbox comes from this machine's own programs or the sandbox's own page.
 * Every route drives the developer's chats (and through them the developer's logged-in `claude`), so
 * each one answers a request only when
 * - its `Host` names this machine's loopback on the sandbox's own port (`127.0.0.1`, `localhost` or
 *   `[::1]`): a page whose host name was rebound to 127.0.0.1 still sends its own name, and is refused;
 * - its `Origin`, when it has one, is such an address too: no page of another origin reaches it.
 * Programs (grammY, Node's fetch) send no `Origin`; browsers send one with every cross-origin request.
 *
 * Pure: the two headers and the port in, a verdict out. The web view adds its run key on top
 * (`web/view-access.ts`); the Bot API routes, its token (`api-routes.ts`).
 */

/** What the check reads of a request. */
export interface RequestPlace {
  host: string | undefined;
  origin: string | undefined;
}

/** The verdict: allowed, or refused with a sentence saying why and what to open instead. */
export type PlaceVerdict = { ok: true } | { ok: false; reason: string };

/** The `host[:port]` forms a request for the sandbox on `port` may name. */
export function loopbackHosts(port: number): string[] {
  const names = ['127.0.0.1', 'localhost', '[::1]'];
  return names.flatMap((name) => (port === 80 ? [name, `${name}:80`] : [`${name}:${port}`]));
}

/** Decides whether `req` may reach `what` (e.g. "the sandbox's Bot API") served on `port`. */
export function checkLoopbackPlace(req: RequestPlace, port: number, what: string): PlaceVerdict {
  const hosts = loopbackHosts(port);
  const host = (req.host ?? '').toLowerCase();
  if (!hosts.includes(host)) {
    return {
      ok: false,
      reason: `${what} answers only http://127.0.0.1:${port}/ or http://localhost:${port}/ (this request was for "${req.host ?? ''}")`,
    };
  }
  if (req.origin !== undefined && !hosts.some((h) => req.origin?.toLowerCase() === `http://${h}`)) {
    return {
      ok: false,
      reason: `${what} takes requests from the sandbox's own page only (this one came from "${req.origin}")`,
    };
  }
  return { ok: true };
}
