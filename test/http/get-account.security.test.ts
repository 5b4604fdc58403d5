import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { bearer } from '../calls.js';
import { ADMIN_TOKEN, type AppHarness, accountWithKey, captureLogs, scratchApp } from '../helpers.js';

const getAccount = (h: AppHarness, authorization: string) =>
  h.app.inject({ method: 'POST', url: '/api/v1/tools/get_account', headers: { authorization } });

describe('get_account, security', () => {
  let h: AppHarness;
  beforeEach(async () => {
    h = await scratchApp();
  });
  afterEach(async () => h.close());

  it('refuses a revoked key on the very next request', async () => {
    const { key, keyId } = await accountWithKey(h.services);
    expect((await getAccount(h, bearer(key))).statusCode).toBe(200);
    await h.services.keys.revoke(keyId);
    expect((await getAccount(h, bearer(key))).json().code).toBe('invalid_api_key');
  });

  it('refuses every key of an account once it is closed', async () => {
    const { key, accountId } = await accountWithKey(h.services);
    const other = await h.services.keys.create(accountId, 'second');
    if (!other.ok) throw new Error('key creation failed');
    await h.services.accounts.update(accountId, { status: 'closed' });
    for (const k of [key, other.value.key]) expect((await getAccount(h, bearer(k))).statusCode).toBe(401);
  });

  it('identifies the account by the key: each key reads its own account only', async () => {
    const a = await accountWithKey(h.services, { name: 'A' });
    const b = await accountWithKey(h.services, { name: 'B' });
    expect((await getAccount(h, bearer(a.key))).json().results.id).toBe(a.accountId);
    expect((await getAccount(h, bearer(b.key))).json().results.id).toBe(b.accountId);
  });

  it('does not take the admin token as an API key', async () => {
    expect((await getAccount(h, bearer(ADMIN_TOKEN))).json().code).toBe('invalid_api_key');
  });

  it('does not open the admin API with an API key', async () => {
    const { key } = await accountWithKey(h.services);
    const res = await h.app.inject({
      method: 'GET',
      url: '/admin/v1/accounts',
      headers: { authorization: bearer(key) },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('invalid_admin_token');
  });

  it('refuses a wrong or missing admin token, also after the right one was used', async () => {
    const right = { authorization: bearer(ADMIN_TOKEN) };
    expect(
      (await h.app.inject({ method: 'GET', url: '/admin/v1/accounts', headers: right })).statusCode,
    ).toBe(200);
    for (const headers of [
      {},
      { authorization: bearer('wrong-token-wrong-token') },
      { authorization: ADMIN_TOKEN },
      { authorization: `${bearer(ADMIN_TOKEN)}x` },
      { authorization: bearer(ADMIN_TOKEN.slice(0, -1)) },
      { authorization: bearer(ADMIN_TOKEN.toUpperCase()) },
    ]) {
      const res = await h.app.inject({ method: 'GET', url: '/admin/v1/accounts', headers });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('invalid_admin_token');
    }
  });

  it('has no admin API at all when no admin token is configured', async () => {
    const off = await scratchApp({ adminToken: null });
    try {
      const res = await off.app.inject({
        method: 'GET',
        url: '/admin/v1/accounts',
        headers: { authorization: bearer(ADMIN_TOKEN) },
      });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
    } finally {
      await off.close();
    }
  });

  it('logs JSON lines with the request id, and never the Authorization header or the key', async () => {
    const { logger, raw: lines } = captureLogs('trace');
    const app = await buildApp({
      services: h.services,
      adminToken: ADMIN_TOKEN,
      logger,
    });
    const { key } = await accountWithKey(h.services);
    const ids: string[] = [];
    for (const authorization of [bearer(key), bearer('tg_AAAAAAAAAAA'), bearer(ADMIN_TOKEN)]) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/tools/get_account',
        headers: { authorization },
      });
      ids.push(String(res.headers['x-request-id']));
    }
    await app.inject({
      method: 'GET',
      url: '/admin/v1/accounts',
      headers: { authorization: bearer(ADMIN_TOKEN) },
    });
    await app.close();
    const logs = lines.join('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    for (const id of ids) expect(logs).toContain(`"request_id":"${id}"`);
    expect(logs).not.toContain(key);
    expect(logs).not.toContain(ADMIN_TOKEN);
    expect(logs.toLowerCase()).not.toContain('bearer');
  });
});
