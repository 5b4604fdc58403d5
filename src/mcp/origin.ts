/**
 * @module Which `Origin` may call /mcp (the MCP specification's DNS-rebinding rule): none at all
 * (clients that are not browsers send none), the server's own, or one the operator listed in
 * TOOLGATE_ALLOWED_ORIGINS. Anything else is refused before any other work.
 */
import { isIP } from 'node:net';
import { normalOrigin } from '../domain/origins.js';

/**
 * Whether `origin` is the request's own: the origin of its Host header, when that host is `localhost`
 * or an address. A name is not enough: a page on a name its owner points at this server (DNS
 * rebinding) sends a Host and an Origin that agree; only the operator can say a name is theirs,
 * by listing its origin.
 */
function isOwn(origin: string, host: string | undefined): boolean {
  if (host === undefined || !(origin.startsWith('http://') || origin.startsWith('https://'))) return false;
  const scheme = origin.slice(0, origin.indexOf('//'));
  const own = normalOrigin(`${scheme}//${host}`);
  if (own !== origin) return false;
  const hostname = new URL(own).hostname.replace(/^\[(.*)\]$/, '$1');
  return hostname === 'localhost' || isIP(hostname) !== 0;
}

/** The check, for a request's `Origin` and `Host` headers: true when it may go on. */
export function originAllowed(
  allowed: ReadonlySet<string>,
  origin: string | undefined,
  host: string | undefined,
): boolean {
  if (origin === undefined) return true;
  const normal = normalOrigin(origin);
  return normal !== undefined && (allowed.has(normal) || isOwn(normal, host));
}
