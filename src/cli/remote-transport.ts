/**
 * @module The remote CLI's one rule on transport: the admin token goes in clear (plain http) only
 * to this machine. An `http://` server that is not loopback (127.0.0.0/8, ::1, localhost) is
 * refused before anything is sent, unless `--allow-http` (or TOOLGATE_ALLOW_HTTP=true) says so.
 */
import { CliError } from './output.js';

/** Whether a URL's hostname (as `new URL` writes it) is this machine's loopback. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost') return true;
  // IPv4 as the URL parser writes it (it has already turned 127.1 or 2130706433 into dotted form).
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return true;
  // IPv6 in brackets, compressed: ::1, and 127.0.0.0/8 mapped into IPv6 (::ffff:7f00:1 and the like).
  return host === '[::1]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(host);
}

/** TOOLGATE_ALLOW_HTTP: `true` or `false` (unset or empty: false), as the server's own switches. */
export function allowHttpFromEnv(env: NodeJS.ProcessEnv): boolean {
  const value = env.TOOLGATE_ALLOW_HTTP;
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  throw new CliError('invalid_configuration', `TOOLGATE_ALLOW_HTTP must be true or false (got "${value}").`);
}

/**
 * Refuses, before any connection, to send the admin token over plain http to a server that is not
 * loopback, unless allowed (`--allow-http` or TOOLGATE_ALLOW_HTTP=true).
 */
export function refuseClearText(serverUrl: string, allowHttp: boolean | undefined, env = process.env): void {
  const url = new URL(serverUrl);
  if (url.protocol !== 'http:' || isLoopbackHost(url.hostname)) return;
  if (allowHttp === true || allowHttpFromEnv(env)) return;
  throw new CliError(
    'invalid_configuration',
    `Refusing to send the admin token over plain http to ${url.host}, which is not this machine: ` +
      `use an https:// URL, or give --allow-http (or TOOLGATE_ALLOW_HTTP=true) to send it unencrypted.`,
  );
}
