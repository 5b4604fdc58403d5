/**
 * @module Which `Origin` may call /mcp (the MCP specification's DNS-rebinding rule): none at all
 * (clients that are not browsers send none), the server's own, or one the operator listed in
 * TOOLGATE_ALLOWED_ORIGINS. Anything else is refused before any other work.
 */
import { isIP } from 'node:net';

/**
 * `scheme://host[:port]` in lower case with the scheme's default port dropped, the form two
 * spellings of one origin share; undefined for anything that is not an origin (`null`, a path, a
 * query, credentials, no host).
 */
export function normalOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  const pathless = url.pathname === '' || url.pathname === '/';
  if (!pathless || url.host === '' || url.search || url.hash || url.username || url.password)
    return undefined;
  return `${url.protocol}//${url.host}`.toLowerCase();
}

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
