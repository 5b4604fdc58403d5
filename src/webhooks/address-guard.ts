/**
 * @module Where webhooks may not go. An endpoint's URL is given by an operator, but an admin token
 * can leak, and a host name can be pointed anywhere after it was checked (DNS rebinding): so the
 * address is checked when an endpoint is added and again on every connection, on the address the
 * connection is actually made to. Refused unless TOOLGATE_WEBHOOK_ALLOW_PRIVATE is set: loopback,
 * private (RFC 1918, unique-local), link-local (cloud metadata services live at 169.254.169.254),
 * carrier-grade NAT, unspecified, multicast and reserved addresses, and IPv6 addresses that carry
 * one of those IPv4 addresses (mapped, 6to4, NAT64, Teredo). See docs/security.md.
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
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  // Local-use NAT64 (RFC 8215): where the IPv4 address sits depends on the network's prefix length.
  ['64:ff9b:1::', 48],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv6');

/** Whether `address` (an IP literal) is one webhooks may not reach, unless private ones are allowed. */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family === 6) {
    // An IPv6 address that carries an IPv4 address reaches it (through the host's stack, a 6to4
    // relay, a NAT64 gateway or a Teredo tunnel): checked as that IPv4 address too.
    const carried = embeddedIpv4(address);
    return carried.some((v4) => BLOCKED.check(v4, 'ipv4')) || BLOCKED.check(address, 'ipv6');
  }
  return true;
}

/** The eight 16-bit groups of an IPv6 literal (which isIP accepted), zone id left out. */
function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const front = head === '' ? [] : head.split(':');
  const back = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array<string>(8 - front.length - back.length).fill('0');
  return [...front, ...zeros, ...back].map((group) => Number.parseInt(group, 16));
}

const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;

/**
 * The IPv4 addresses an IPv6 address carries: IPv4-mapped (::ffff:a.b.c.d), IPv4-translated
 * (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d), 6to4 (2002:aabb:ccdd::)
 * and Teredo (2001:0:<server>::<client, inverted>).
 */
export function embeddedIpv4(address: string): string[] {
  const g = ipv6Groups(address);
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const tail = v4(g[6]!, g[7]!);
  if (zero(0, 5) && (g[5] === 0xffff || g[5] === 0)) return [tail];
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return [tail];
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return [tail];
  if (g[0] === 0x2002) return [v4(g[1]!, g[2]!)];
  if (g[0] === 0x2001 && g[1] === 0) return [v4(g[2]!, g[3]!), v4(~g[6]! & 0xffff, ~g[7]! & 0xffff)];
  return [];
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
