/**
 * @module Where webhooks may not go. An endpoint's URL is given by an operator, but an admin token
 * can leak, and a host name can be pointed anywhere after it was checked (DNS rebinding): so the
 * address is checked when an endpoint is added and again on every connection, on the address the
 * connection is actually made to. Refused unless TOOLGATE_WEBHOOK_ALLOW_PRIVATE is set: loopback,
 * private (RFC 1918, unique-local), link-local (cloud metadata services live at 169.254.169.254),
 * carrier-grade NAT, unspecified, multicast and reserved addresses. See docs/security.md.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv6');

/** Whether `address` (an IP literal) is one webhooks may not reach, unless private ones are allowed. */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family === 6) {
    // An IPv4 address written as IPv6 (::ffff:127.0.0.1) is checked as the IPv4 address it is.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return BLOCKED.check(mapped[1]!, 'ipv4');
    return BLOCKED.check(address, 'ipv6');
  }
  return true;
}

export class BlockedAddressError extends Error {
  readonly code = 'ERR_TOOLGATE_BLOCKED_ADDRESS';
  constructor(host: string, address: string) {
    super(
      `${host} resolves to ${address}, a loopback, private, link-local or reserved address; webhooks go only to public addresses unless TOOLGATE_WEBHOOK_ALLOW_PRIVATE=true`,
    );
  }
}

/** The host of a URL as an address or name (brackets of an IPv6 literal removed). */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Resolves the URL's host and throws BlockedAddressError if any of its addresses is blocked. */
export async function checkDestination(url: URL): Promise<void> {
  const host = hostOf(url);
  if (isIP(host)) {
    if (isBlockedAddress(host)) throw new BlockedAddressError(host, host);
    return;
  }
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
    dnsLookup(host, { all: true }, (err, found) => (err ? reject(err) : resolve(found))),
  );
  const blocked = addresses.find((a) => isBlockedAddress(a.address));
  if (blocked) throw new BlockedAddressError(host, blocked.address);
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for the connections webhooks are sent on: resolves as Node does, then refuses the
 * connection if the address it would be made to is blocked (so a name re-pointed after it was
 * checked still cannot reach one).
 */
export function guardedLookup(hostname: string, options: object, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const blocked = addresses.find((a) => isBlockedAddress(a.address));
    if (blocked) return callback(new BlockedAddressError(hostname, blocked.address), []);
    if ((options as { all?: boolean }).all) return callback(null, addresses);
    const first = addresses[0];
    if (!first)
      return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
    callback(null, first.address, first.family);
  });
}
