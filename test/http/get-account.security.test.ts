import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { admin, bearer, callTool } from '../calls.js';
import { ADMIN_TOKEN, type AppHarness, accountWithKey, captureLogs, scratchApp } from '../helpers.js';

describe('get_account, security', () => {
  let h: AppHarness;
  beforeEach(async () => {
    h = await scratchApp();
  });
  afterEach(async () => h.close());

  it('refuses a revoked key on the very next request', async () => {
    const { key, keyId } = await accountWithKey(h.services);
    expect((await callTool(h.app, key, 'get_account')).statusCode).toBe(200);
    await h.services.keys.revoke(keyId);
    expect((await callTool(h.app, key, 'get_account')).json().code).toBe('invalid_api_key');
  });

  it('refuses every key of an account once it is closed', async () => {
    const { key, accountId } = await accountWithKey(h.services);
    const other = await h.services.keys.create(accountId, 'second');
    if (!other.ok) throw new Error('key creation failed');
    await h.services.accounts.update(accountId, { status: 'closed' });
    for (const k of [key, other.value.key])
      expect((await callTool(h.app, k, 'get_account')).statusCode).toBe(401);
  });

  it('identifies the account by the key: each key reads its own account only', async () => {
    const a = await accountWithKey(h.services, { name: 'A' });
    const b = await accountWithKey(h.services, { name: 'B' });
    expect((await callTool(h.app, a.key, 'get_account')).json().results.id).toBe(a.accountId);
    expect((await callTool(h.app, b.key, 'get_account')).json().results.id).toBe(b.accountId);
  });

  it('does not take the admin token as an API key', async () => {
    expect((await callTool(h.app, ADMIN_TOKEN, 'get_account')).json().code).toBe('invalid_api_key');
  });

  it('does not open the admin API with an API key', async () => {
    const { key } = await accountWithKey(h.services);
    const res = await admin(h.app, key).get('/accounts');
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('invalid_admin_token');
  });

  it('refuses a wrong or missing admin token, also after the right one was used', async () => {
    expect((await admin(h.app, ADMIN_TOKEN).get('/accounts')).statusCode).toBe(200);
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
      const res = await admin(off.app, ADMIN_TOKEN).get('/accounts');
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
    await admin(app, ADMIN_TOKEN).get('/accounts');
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
