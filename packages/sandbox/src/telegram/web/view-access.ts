/**
 * Who may use the web chat view. The view drives the sandbox (and through it the developer's logged-in
 * `claude`), so a request reaches it only when
 * - its `Host` and `Origin` are this machine's loopback on the sandbox's own port (`../loopback.ts`): no
 *   rebound host name, no page of another origin;
 * - it carries the run's secret: in the `k` query parameter (the URL the sandbox prints), in the cookie
 *   the page's first load sets, or in the `x-sandbox-view` header (scripts and tests).
 *
 * Pure: the request's headers and URL in, a verdict out.
 */
import { timingSafeEqual } from 'node:crypto';
import { checkLoopbackPlace } from '../loopback.js';

/** What the check reads of a request. */
export interface ViewRequest {
  host: string | undefined;
  origin: string | undefined;
  cookie: string | undefined;
  /** The `x-sandbox-view` header. */
  header: string | undefined;
  /** The `k` query parameter. */
  key: string | null;
}

/** The verdict: allowed (with whether the page should set its cookie), or refused with the reason. */
export type ViewAccess = { ok: true; setCookie: boolean } | { ok: false; reason: string };

/** The cookie that carries the secret for the view on `port` (cookies are per host, not per port). */
export function viewCookieName(port: number): string {
  return `sandbox_view_${port}`;
}

function sameSecret(given: string | undefined | null, secret: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** Decides whether `req` may use the view served on `port` whose secret is `secret`. */
export function checkViewAccess(req: ViewRequest, port: number, secret: string): ViewAccess {
  const place = checkLoopbackPlace(req, port, "the sandbox's web view");
  if (!place.ok) return place;
  if (sameSecret(req.key, secret)) return { ok: true, setCookie: true };
  if (sameSecret(req.header, secret) || sameSecret(cookieValue(req.cookie, viewCookieName(port)), secret)) {
    return { ok: true, setCookie: false };
  }
  return {
    ok: false,
    reason:
      'this request lacks the sandbox run key: open the address the sandbox printed (it ends in ?k=…), ' +
      'which is new on every run',
  };
}
