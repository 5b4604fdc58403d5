/**
 * The webhook address guard against every IPv6 form that carries an IPv4 address (mapped,
 * translated, compatible, NAT64, 6to4, Teredo): checked as the IPv4 address it carries, at add
 * (the admin API) and at send (a real socket to a real receiver on loopback).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { embeddedIpv4, isBlockedAddress } from '../../src/webhooks/address-guard.js';
import { WebhookSender } from '../../src/webhooks/sender.js';
import { admin } from '../calls.js';
import { ADMIN_TOKEN, type AppHarness, scratchApp } from '../helpers.js';
import { type Receiver, startReceiver } from './receiver.js';

/** [IPv6 literal, the IPv4 address it carries]: every one a loopback, private or link-local address. */
const CARRYING_PRIVATE: [string, string][] = [
  ['2002:7f00:1::', '127.0.0.1'],
  ['2002:7f00:0001:0:0:0:0:1', '127.0.0.1'],
  ['2002:a00:1::', '10.0.0.1'],
  ['2002:a9fe:a9fe::', '169.254.169.254'],
  ['2002:c0a8:101::1', '192.168.1.1'],
  ['::ffff:127.0.0.1', '127.0.0.1'],
  ['::ffff:7f00:1', '127.0.0.1'],
  ['::FFFF:10.0.0.1', '10.0.0.1'],
  ['::ffff:0:127.0.0.1', '127.0.0.1'],
  ['::ffff:0:a9fe:a9fe', '169.254.169.254'],
  ['::127.0.0.1', '127.0.0.1'],
  ['::7f00:1', '127.0.0.1'],
  ['::a9fe:a9fe', '169.254.169.254'],
  ['64:ff9b::127.0.0.1', '127.0.0.1'],
  ['64:ff9b::a00:1', '10.0.0.1'],
  ['64:ff9b::a9fe:a9fe', '169.254.169.254'],
  // Teredo: the server's address in the clear, the client's inverted.
  ['2001:0:7f00:1::', '127.0.0.1'],
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', '127.0.0.1'],
  ['2001:0:4136:e378:8000:63bf:f5ff:fffe', '10.0.0.1'],
];

const PUBLIC_V4 = '93.184.216.34';
const PUBLIC: string[] = [
  PUBLIC_V4,
  `::ffff:${PUBLIC_V4}`,
  `64:ff9b::${PUBLIC_V4}`,
  '2002:5db8:d822::1',
  '2001:0:4136:e378:8000:63bf:a247:27dd',
  '2606:2800:220:1:248:1893:25c8:1946',
];

describe('isBlockedAddress', () => {
  it.each(CARRYING_PRIVATE)('refuses %s, which carries %s', (address, carried) => {
    expect(isIP6(address)).toBe(true);
    expect(embeddedIpv4(address)).toContain(carried);
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each(PUBLIC)('lets %s through: it carries a public address, or none', (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });

  it.each([
    '::',
    '::1',
    'fe80::1',
    'fe80::1%eth0',
    'fec0::1',
    'fd00::1',
    'ff02::1',
    '100::1',
    '2001:db8::1',
    '64:ff9b:1::a00:1',
  ])('refuses the IPv6 address %s (loopback, private, link- or site-local, reserved)', (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });
});

function isIP6(address: string): boolean {
  return new URL(`http://[${address.replace(/%.*$/, '')}]/`).hostname.length > 2;
}

describe('adding an endpoint through the admin API', () => {
  let h: AppHarness;
  beforeEach(async () => {
    h = await scratchApp();
  });
  afterEach(async () => h.close());

  it.each(CARRYING_PRIVATE.filter(([a]) => !a.includes('%')))(
    'refuses http://[%s]/ with 400 naming the address',
    async (address) => {
      const res = await admin(h.app, ADMIN_TOKEN).post('/webhooks', { url: `http://[${address}]/hooks` });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toMatch(/loopback, private, link-local or reserved address/);
      expect(await h.services.webhooks.list()).toEqual({ ok: true, value: [] });
    },
  );
});

describe('sending over a real socket', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => receiver.close());

  it('never connects to loopback written as IPv4-mapped IPv6, which the host does reach', async () => {
    const port = new URL(receiver.url).port;
    const message = { id: 'msg_mapped', body: '{}' };
    const guarded = new WebhookSender({ timeoutMs: 2000, allowPrivate: false });
    const open = new WebhookSender({ timeoutMs: 2000, allowPrivate: true });
    try {
      for (const literal of ['::ffff:127.0.0.1', '::ffff:7f00:1']) {
        const sent = await guarded.send(`http://[${literal}]:${port}/`, 'whsec_c2VjcmV0', message, 0);
        expect(sent).toMatchObject({ delivered: false, statusCode: null });
        expect(sent.error).toMatch(/loopback, private, link-local or reserved/);
      }
      expect(receiver.received).toHaveLength(0);
      // The same address, private addresses allowed: it does reach the receiver on 127.0.0.1.
      const reached = await open.send(`http://[::ffff:7f00:1]:${port}/`, 'whsec_c2VjcmV0', message, 0);
      expect(reached.statusCode).not.toBeNull();
      expect(receiver.received).toHaveLength(1);
    } finally {
      await guarded.close();
      await open.close();
    }
  });
});
