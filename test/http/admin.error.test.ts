import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { send } from '../calls.js';
import { type AppHarness, scratchApp } from '../helpers.js';
import { admin } from './admin.test-helpers.js';

describe('admin API, errors', () => {
  let h: AppHarness;
  let api: ReturnType<typeof admin>;
  let id: string;
  beforeEach(async () => {
    h = await scratchApp();
    api = admin(h);
    id = (await api.post('/accounts', { name: 'Acme', tokens: 10 })).json().id;
  });
  afterEach(async () => h.close());

  const expectError = (res: Awaited<ReturnType<typeof api.get>>, status: number, code: string) => {
    expect(res.statusCode).toBe(status);
    expect(res.json()).toMatchObject({ status: 'error', code, request_id: res.headers['x-request-id'] });
    return res.json();
  };

  it('answers 400 invalid_arguments for bad or unknown fields', async () => {
    expectError(await api.post('/accounts', {}), 400, 'invalid_arguments');
    expectError(await api.post('/accounts', { name: '' }), 400, 'invalid_arguments');
    expectError(await api.post('/accounts', { name: 'x', color: 'red' }), 400, 'invalid_arguments');
    expectError(await api.post('/accounts', { name: 'x', tokens: -1 }), 400, 'invalid_arguments');
    expectError(await api.post('/accounts', { name: 'x', tokens: '5' }), 400, 'invalid_arguments');
    expect(
      expectError(await api.post('/accounts', { name: 'x', plan: 'gold' }), 400, 'invalid_arguments').message,
    ).toContain('gold');
    expectError(await api.patch(`/accounts/${id}`, {}), 400, 'invalid_arguments');
    expectError(await api.patch(`/accounts/${id}`, { status: 'deleted' }), 400, 'invalid_arguments');
    expectError(await api.post(`/accounts/${id}/users`, { email: 'not-an-email' }), 400, 'invalid_arguments');
    expectError(
      await api.post(`/accounts/${id}/users`, { email: 'a@b.co', role: 'admin' }),
      400,
      'invalid_arguments',
    );
    expectError(
      await api.post(`/accounts/${id}/tokens`, { kind: 'charge', amount: 0 }),
      400,
      'invalid_arguments',
    );
    expectError(
      await api.post(`/accounts/${id}/tokens`, { kind: 'steal', amount: 1 }),
      400,
      'invalid_arguments',
    );
    expectError(
      await api.post(`/accounts/${id}/tokens`, { kind: 'adjust', amount: 0 }),
      400,
      'invalid_arguments',
    );
    expectError(await api.post(`/accounts/${id}/usage`, { category: 'browse' }), 400, 'invalid_arguments');
    expectError(
      await api.post(`/accounts/${id}/usage`, { category: 'enrich', records: 0, requests: 0 }),
      400,
      'invalid_arguments',
    );
    expectError(
      await api.post(`/accounts/${id}/usage`, { category: 'enrich', records: 1.5 }),
      400,
      'invalid_arguments',
    );
    expectError(await api.put('/plans/BAD ID', { limits: {} }), 400, 'invalid_arguments');
    expectError(
      await api.put('/plans/half', { limits: { enrich: { records: { '5h': 1 } } } }),
      400,
      'invalid_arguments',
    );
    expectError(await api.get('/accounts?limit=0'), 400, 'invalid_arguments');
    expectError(await api.get('/accounts?limit=abc'), 400, 'invalid_arguments');
  });

  it('answers 400 invalid_json for a body that is not JSON', async () => {
    const res = await send(h.app, 'test-admin-token-0123456789', 'POST', '/admin/v1/accounts', undefined, {
      raw: '{"name":',
    });
    expectError(res, 400, 'invalid_json');
  });

  it('answers 404 not_found for unknown accounts, keys and users', async () => {
    expectError(await api.get('/accounts/acc_nope'), 404, 'not_found');
    expectError(await api.patch('/accounts/acc_nope', { name: 'x' }), 404, 'not_found');
    expectError(await api.post('/accounts/acc_nope/keys'), 404, 'not_found');
    expectError(await api.get('/accounts/acc_nope/keys'), 404, 'not_found');
    expectError(await api.del('/keys/key_nope'), 404, 'not_found');
    expectError(await api.post('/accounts/acc_nope/users', { email: 'a@b.co' }), 404, 'not_found');
    expectError(await api.del('/users/usr_nope'), 404, 'not_found');
    expectError(await api.post('/accounts/acc_nope/tokens', { kind: 'grant', amount: 1 }), 404, 'not_found');
    expectError(await api.get('/accounts/acc_nope/tokens'), 404, 'not_found');
    expectError(await api.post('/accounts/acc_nope/usage', { category: 'enrich' }), 404, 'not_found');
  });

  it('answers 409 conflict for a duplicate user and for reopening or keying a closed account', async () => {
    await api.post(`/accounts/${id}/users`, { email: 'a@b.co' });
    expectError(await api.post(`/accounts/${id}/users`, { email: 'A@B.co' }), 409, 'conflict');
    await api.patch(`/accounts/${id}`, { status: 'closed' });
    expectError(await api.patch(`/accounts/${id}`, { status: 'active' }), 409, 'conflict');
    expectError(await api.post(`/accounts/${id}/keys`), 409, 'conflict');
  });

  it('answers 409 idempotency_conflict when a key is reused with a different payload', async () => {
    await api.post(`/accounts/${id}/tokens`, { kind: 'charge', amount: 1, idempotency_key: 'k1' });
    expectError(
      await api.post(`/accounts/${id}/tokens`, { kind: 'charge', amount: 2, idempotency_key: 'k1' }),
      409,
      'idempotency_conflict',
    );
    await api.post(`/accounts/${id}/usage`, { category: 'enrich', records: 1, idempotency_key: 'u1' });
    expectError(
      await api.post(`/accounts/${id}/usage`, { category: 'enrich', records: 2, idempotency_key: 'u1' }),
      409,
      'idempotency_conflict',
    );
  });

  it('answers 402 insufficient_tokens for a charge that does not fit, and changes nothing', async () => {
    const body = expectError(
      await api.post(`/accounts/${id}/tokens`, { kind: 'charge', amount: 11 }),
      402,
      'insufficient_tokens',
    );
    expect(body.token_balance).toBe(10);
    expectError(
      await api.post(`/accounts/${id}/tokens`, { kind: 'adjust', amount: -11 }),
      402,
      'insufficient_tokens',
    );
    expect((await api.get(`/accounts/${id}`)).json().token_balance).toBe(10);
    expect((await api.get(`/accounts/${id}/tokens`)).json().data).toHaveLength(1);
  });

  it('answers 429 fair_use_exceeded naming the window and its resets_at, and records nothing', async () => {
    expect((await api.post(`/accounts/${id}/usage`, { category: 'search', records: 40 })).statusCode).toBe(
      200,
    );
    const body = expectError(
      await api.post(`/accounts/${id}/usage`, { category: 'search', records: 11 }),
      429,
      'fair_use_exceeded',
    );
    expect(body).toMatchObject({
      window: 'search.records.5h',
      limit: 50,
      used: 40,
      resets_at: '2026-04-15T18:55:29Z',
    });
    expect(body.message).toContain('search.records.5h');
    const after = (await api.get(`/accounts/${id}`)).json().fair_use.search;
    expect(after.records['5h'].used).toBe(40);
    expect(after.requests['5h'].used).toBe(1);
  });

  it('answers 403 for usage on a suspended or closed account', async () => {
    await api.patch(`/accounts/${id}`, { status: 'suspended' });
    expectError(await api.post(`/accounts/${id}/usage`, { category: 'enrich' }), 403, 'account_suspended');
    await api.patch(`/accounts/${id}`, { status: 'closed' });
    expectError(await api.post(`/accounts/${id}/usage`, { category: 'enrich' }), 403, 'account_closed');
  });
});
