/**
 * Which links a reply may carry, and how a link shows where it goes: one policy for the classic path
 * (`markdown.ts`, Telegram HTML) and the rich one (`rich-markdown.ts`, Telegram's rich
 * Markdown). Pure.
 *
 * - Only `http:`, `https:`, `tg:` and `mailto:` targets are links; anything else (`javascript:`, `data:`,
 *   `file:`, a relative path) keeps its text and loses the link.
 * - A link whose text looks like a URL or a domain of another host
 *   (`[https://bank.example](https://evil.test)`) is followed by the host it really goes to, so the text
 *   cannot pass for the destination.
 */
import { cutEnd, urlHost } from '@switchyard/card';

const ALLOWED = /^(https?:|tg:|mailto:)/i;

/** Whether `href` may be a link in a reply. */
export function linkAllowed(href: string): boolean {
  return ALLOWED.test(href.trim());
}

/** A text that reads as a web address: `https://a.example/x`, `www.a.example`, `a.example/x`. */
const URL_LIKE =
  /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:[^\s@/]+@)?((?:[a-z0-9-]+\.)+[a-z]{2,})(?::\d+)?(?:[/?#]\S*)?$/i;

/**
 * What to show after a link whose text names another place than it goes to: ` (evil.test)`, or `''`.
 * A target with no host (`mailto:`, `tg:`) is shown whole, cut to 80 characters.
 */
export function destinationNote(text: string, href: string): string {
  const named = URL_LIKE.exec(text.trim())?.[1]?.toLowerCase();
  if (named === undefined) return '';
  const host = urlHost(href);
  if (host !== undefined && bare(host) === bare(named)) return '';
  const where = host ?? href.trim();
  return ` (${cutEnd(where, 80)})`;
}

function bare(host: string): string {
  return host.replace(/^www\./, '');
}
