import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { admin, callTool, send } from '../calls.js';
import { ADMIN_TOKEN, accountWithKey, type Harness, scratchServices } from '../helpers.js';

describe('rate limits on the tools API', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await scratchServices();
  });
  afterEach(async () => h.close());

  const app = (perKeyPerSecond: number, authFailuresPerMinute: number, trustProxy?: boolean) =>
    buildApp({
      services: h.services,
      adminToken: ADMIN_TOKEN,
      rateLimits: { perKeyPerSecond, authFailuresPerMinute, clock: h.clock },
      ...(trustProxy === undefined ? {} : { trustProxy }),
    });
  const call = (
    a: Awaited<ReturnType<typeof app>>,
    key: string,
    remoteAddress = '203.0.113.7',
    headers = {},
  ) => callTool(a, key, 'get_account', undefined, { headers, remoteAddress });

  it('lets each key make its number of requests per second, says so in headers, then answers 429 with Retry-After', async () => {
    const a = await app(3, 0);
    const { key } = await accountWithKey(h.services);
    const other = await accountWithKey(h.services, { name: 'other' });
    for (const remaining of [2, 1, 0]) {
      const res = await call(a, key);
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-policy']).toBe('"per-key";q=3;w=1');
      expect(res.headers.ratelimit).toBe(`"per-key";r=${remaining};t=1`);
    }
    const refused = await call(a, key);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers.ratelimit).toBe('"per-key";r=0;t=1');
    expect(refused.json()).toMatchObject({
      status: 'error',
      code: 'rate_limited',
      error: 'Too Many Requests',
      retry_after: 1,
    });
    // Another key has its own budget; the next second gives this one a fresh one.
    expect((await call(a, other.key)).statusCode).toBe(200);
    h.clock.advance(1);
    expect((await call(a, key)).statusCode).toBe(200);
    await a.close();
  });

  it('counts get_account and every other tool call, refused ones included, and spends nothing on a refusal', async () => {
    const a = await app(2, 0);
    const { key, accountId } = await accountWithKey(h.services);
    const unknown = await callTool(a, key, 'nope');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers.ratelimit).toBe('"per-key";r=1;t=1');
    expect((await call(a, key)).statusCode).toBe(200);
    expect((await call(a, key)).statusCode).toBe(429);
    expect((await h.store.accounts.snapshot(accountId))?.windows).toEqual([]);
    await a.close();
  });

  it('slows down an address that keeps failing authentication, whatever key it sends next', async () => {
    const a = await app(100, 3);
    const { key } = await accountWithKey(h.services);
    for (const remaining of [2, 1, 0]) {
      const res = await call(a, 'tg_AAAAAAAAAAA');
      expect(res.statusCode).toBe(401);
      expect(res.headers['ratelimit-policy']).toBe('"auth-failures";q=3;w=60');
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"auth-failures";r=${remaining};t=\\d+$`));
    }
    // Refused before the key is even looked at: a good key would otherwise tell a guesser it is good.
    for (const k of ['tg_BBBBBBBBBBB', key]) {
      const res = await call(a, k);
      expect(res.statusCode).toBe(429);
      expect(res.json().code).toBe('rate_limited');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    // Other addresses are not affected; the address recovers when the minute is over.
    expect((await call(a, key, '198.51.100.1')).statusCode).toBe(200);
    h.clock.advance(60);
    expect((await call(a, key)).statusCode).toBe(200);
    await a.close();
  });

  it('does not count successful authentications against the address', async () => {
    const a = await app(1000, 2);
    const { key } = await accountWithKey(h.services);
    for (let i = 0; i < 10; i++) expect((await call(a, key)).statusCode).toBe(200);
    await a.close();
  });

  it('has no per-key limit or per-key headers when TOOLGATE_RATE_LIMIT is 0', async () => {
    const a = await app(0, 0);
    const { key } = await accountWithKey(h.services);
    for (let i = 0; i < 300; i++) {
      const res = await call(a, key);
      expect(res.statusCode).toBe(200);
      if (i === 0) expect(res.headers.ratelimit).toBeUndefined();
    }
    await a.close();
  });

  it('tells clients apart by X-Forwarded-For only when the proxy is trusted', async () => {
    const trusting = await app(100, 1, true);
    await call(trusting, 'tg_AAAAAAAAAAA', '10.0.0.1', { 'x-forwarded-for': '192.0.2.1' });
    expect(
      (await call(trusting, 'tg_AAAAAAAAAAA', '10.0.0.1', { 'x-forwarded-for': '192.0.2.1' })).statusCode,
    ).toBe(429);
    expect(
      (await call(trusting, 'tg_AAAAAAAAAAA', '10.0.0.1', { 'x-forwarded-for': '192.0.2.2' })).statusCode,
    ).toBe(401);
    await trusting.close();

    const direct = await app(100, 1);
    await call(direct, 'tg_AAAAAAAAAAA', '10.0.0.1', { 'x-forwarded-for': '192.0.2.1' });
    // A client cannot escape the limit by inventing a forwarded address.
    expect(
      (await call(direct, 'tg_AAAAAAAAAAA', '10.0.0.1', { 'x-forwarded-for': '192.0.2.9' })).statusCode,
    ).toBe(429);
    await direct.close();
  });

  it('limits wrong admin tokens per address: 429 after 20 a minute, the right token too, other addresses not', async () => {
    const a = await app(100, 30);
    const admin = (token: string, remoteAddress = '203.0.113.7') =>
      send(a, token, 'GET', '/admin/v1/plans', undefined, { remoteAddress });
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await admin(`wrong-admin-token-${i}`)).statusCode);
    expect(statuses).toEqual([...Array(20).fill(401), ...Array(5).fill(429)]);
    const refused = await admin(ADMIN_TOKEN);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'rate_limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await admin(ADMIN_TOKEN, '198.51.100.1')).statusCode).toBe(200);
    h.clock.advance(60);
    expect((await admin(ADMIN_TOKEN)).statusCode).toBe(200);
    await a.close();
  });

  it('does not limit the admin API', async () => {
    const a = await app(1, 1);
    for (let i = 0; i < 5; i++) {
      const res = await admin(a, ADMIN_TOKEN).get('/plans');
      expect(res.statusCode).toBe(200);
    }
    await a.close();
  });
});
