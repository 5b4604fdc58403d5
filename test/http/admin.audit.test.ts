import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { digestKey } from '../../src/domain/api-keys.js';
import type { AuditRecord } from '../../src/service/views.js';
import { TOOLS } from '../../src/tools/index.js';
import type { DataTool } from '../../src/tools/tool.js';
import { callTool, send } from '../calls.js';
import { type AppHarness, accountWithKey, KEY_SECRET, scratchServices } from '../helpers.js';
import { admin } from './admin.test-helpers.js';

const OPS = { name: 'ops', token: 'ops-token-0123456789abcdef' };
const BILLING = { name: 'billing', token: 'billing-token-0123456789abcdef' };
const AT = '2026-04-15T13:55:29Z';

/** A metered tool: a caller's call through it is metered, and is not an admin action. */
const lookup: DataTool = {
  kind: 'data',
  name: 'test_lookup',
  summary: 'test only',
  description: 'returns one record for 1 token',
  args: Type.Object({}, { additionalProperties: false }),
  results: Type.Object({ ok: Type.Boolean() }),
  metered: { category: 'enrich', tokenCost: () => 1 },
  async run() {
    return { results: { ok: true }, records: 1 };
  },
};

describe('admin API, audit trail', () => {
  let h: AppHarness;
  let ops: ReturnType<typeof admin>;
  let billing: ReturnType<typeof admin>;
  beforeEach(async () => {
    const base = await scratchServices();
    const app = await buildApp({
      services: base.services,
      adminTokens: [OPS, BILLING],
      tools: [...TOOLS, lookup],
    });
    h = {
      ...base,
      app,
      async close() {
        await app.close();
        await base.close();
      },
    };
    ops = admin(h, OPS.token);
    billing = admin(h, BILLING.token);
    seen = 0;
  });
  afterEach(async () => h.close());

  const trail = async (query = ''): Promise<AuditRecord[]> => {
    const res = await ops.get(`/audit${query}`);
    expect(res.statusCode).toBe(200);
    return res.json().data;
  };

  /** How many entries the trail had at the last look. */
  let seen = 0;
  /** The entries written since the last look: expected to be exactly one, equal to `expected`. */
  const oneNew = async (expected: Partial<AuditRecord>): Promise<AuditRecord> => {
    const all = await trail();
    const fresh = all.slice(seen);
    seen = all.length;
    expect(fresh, JSON.stringify(expected)).toHaveLength(1);
    expect(fresh[0]).toEqual({ id: expect.stringMatching(/^aud_/), at: AT, actor: 'admin:ops', ...expected });
    return fresh[0]!;
  };
  const noneNew = async (what: string) => {
    const all = await trail();
    expect(all.slice(seen), what).toEqual([]);
  };

  it('leaves exactly one entry for every mutating endpoint but usage (metering), naming the actor, action, account and target', async () => {
    const created = await ops.post('/accounts', { name: 'Acme', tokens: 100 });
    expect(created.statusCode).toBe(201);
    const id = created.json().id;
    await oneNew({
      action: 'account.create',
      account_id: id,
      target_id: null,
      details: { name: 'Acme', plan: 'free', unlimited: null, tokens: 100 },
    });

    expect((await ops.patch(`/accounts/${id}`, { name: 'Acme Ltd', unlimited: false })).statusCode).toBe(200);
    await oneNew({
      action: 'account.update',
      account_id: id,
      target_id: null,
      details: { name: 'Acme Ltd', unlimited: false },
    });

    const key = (await ops.post(`/accounts/${id}/keys`, { name: 'ci' })).json();
    await oneNew({ action: 'key.create', account_id: id, target_id: key.id, details: { name: 'ci' } });
    expect((await ops.del(`/keys/${key.id}`)).statusCode).toBe(200);
    await oneNew({ action: 'key.revoke', account_id: id, target_id: key.id, details: {} });

    const user = (await ops.post(`/accounts/${id}/users`, { email: 'Ann@Example.com' })).json();
    await oneNew({
      action: 'user.add',
      account_id: id,
      target_id: user.id,
      details: { email: 'ann@example.com', role: 'member' },
    });
    expect((await ops.del(`/users/${user.id}`)).statusCode).toBe(200);
    await oneNew({
      action: 'user.remove',
      account_id: id,
      target_id: user.id,
      details: { email: 'ann@example.com' },
    });

    const tokenSteps = [
      [
        { kind: 'grant', amount: 5 },
        { amount: 5, reason: null, idempotency_key: null },
      ],
      [
        { kind: 'charge', amount: 3, idempotency_key: 'order-1' },
        { amount: 3, reason: null, idempotency_key: 'order-1' },
      ],
      [
        { kind: 'adjust', amount: -2, reason: 'correction' },
        { amount: -2, reason: 'correction', idempotency_key: null },
      ],
    ] as const;
    for (const [body, details] of tokenSteps) {
      const res = await ops.post(`/accounts/${id}/tokens`, body);
      expect(res.statusCode).toBe(201);
      await oneNew({
        action: `tokens.${body.kind}`,
        account_id: id,
        target_id: res.json().entry.id,
        details,
      });
    }

    expect((await ops.post(`/accounts/${id}/usage`, { category: 'enrich', records: 2 })).statusCode).toBe(
      200,
    );
    await noneNew('the usage endpoint is metering traffic, not audited');

    const limits = {
      enrich: { records: { '5h': 1, '1w': 2 }, requests: { '5h': 3 } },
      search: { records: { '5h': 4, '1w': 5 }, requests: { '5h': 6 } },
    };
    expect((await ops.put('/plans/tiny', { limits })).statusCode).toBe(200);
    await oneNew({
      action: 'plan.put',
      account_id: null,
      target_id: 'tiny',
      details: {
        unlimited: false,
        limits,
        subscription: null,
        stripe_price: null,
        period_tokens: null,
        name: null,
        description: null,
      },
    });

    // Closing revokes every key in the same step: still one action, one entry.
    const second = (await ops.post(`/accounts/${id}/keys`)).json();
    await oneNew({ action: 'key.create', account_id: id, target_id: second.id, details: { name: null } });
    expect((await ops.patch(`/accounts/${id}`, { status: 'closed' })).statusCode).toBe(200);
    await oneNew({
      action: 'account.update',
      account_id: id,
      target_id: null,
      details: { status: 'closed' },
    });
  });

  it('leaves no entry for refused, replayed, unauthenticated or read-only requests', async () => {
    const id = (await ops.post('/accounts', { name: 'Acme', tokens: 10 })).json().id;
    const key = (await ops.post(`/accounts/${id}/keys`)).json();
    await ops.post(`/accounts/${id}/users`, { email: 'ann@example.com' });
    await ops.post(`/accounts/${id}/tokens`, { kind: 'charge', amount: 1, idempotency_key: 'c-1' });
    await ops.post(`/accounts/${id}/usage`, { category: 'enrich', records: 1, idempotency_key: 'u-1' });
    await ops.del(`/keys/${key.id}`);
    seen = (await trail()).length;
    expect(seen).toBe(5); // the usage endpoint is metering, not audited

    const refused: Array<[Promise<{ statusCode: number }>, number]> = [
      [ops.post('/accounts', {}), 400],
      [ops.post('/accounts', { name: 'X', plan: 'gold' }), 400],
      [ops.patch(`/accounts/${id}`, {}), 400],
      [ops.patch('/accounts/acc_nope', { name: 'X' }), 404],
      [ops.post('/accounts/acc_nope/keys'), 404],
      [ops.del('/keys/key_nope'), 404],
      [ops.post('/accounts/acc_nope/users', { email: 'a@b.co' }), 404],
      [ops.post(`/accounts/${id}/users`, { email: 'ANN@example.com' }), 409],
      [ops.del('/users/usr_nope'), 404],
      [ops.post(`/accounts/${id}/tokens`, { kind: 'charge', amount: 0 }), 400],
      [ops.post(`/accounts/${id}/tokens`, { kind: 'charge', amount: 999 }), 402],
      [ops.post(`/accounts/${id}/tokens`, { kind: 'charge', amount: 1, idempotency_key: 'c-1' }), 200],
      [ops.post(`/accounts/${id}/tokens`, { kind: 'charge', amount: 2, idempotency_key: 'c-1' }), 409],
      [ops.post('/accounts/acc_nope/tokens', { kind: 'grant', amount: 1 }), 404],
      [ops.post(`/accounts/${id}/usage`, { category: 'enrich', records: 1, idempotency_key: 'u-1' }), 200],
      [ops.post(`/accounts/${id}/usage`, { category: 'enrich', records: 2, idempotency_key: 'u-1' }), 409],
      [ops.post(`/accounts/${id}/usage`, { category: 'enrich', records: 100 }), 429],
      [ops.post(`/accounts/${id}/usage`, { category: 'browse' }), 400],
      [ops.post('/accounts/acc_nope/usage', { category: 'enrich' }), 404],
      [ops.del(`/keys/${key.id}`), 200], // already revoked: nothing happens
      [ops.put('/plans/half', { limits: { enrich: {} } }), 400],
      [ops.get('/accounts'), 200],
      [ops.get(`/accounts/${id}`), 200],
      [ops.get(`/accounts/${id}/keys`), 200],
      [ops.get(`/accounts/${id}/tokens`), 200],
      [ops.get('/plans'), 200],
      [send(h.app, null, 'POST', '/admin/v1/accounts', { name: 'Anon' }), 401],
      [send(h.app, key.key, 'POST', '/admin/v1/accounts', { name: 'Key holder' }), 401],
    ];
    for (const [i, [request, status]] of refused.entries()) {
      expect((await request).statusCode, `request #${i}`).toBe(status);
      await noneNew(`request #${i}`);
    }

    // Nothing to charge on an unlimited account: answered 200, and nothing happened to audit.
    const big = (await ops.post('/accounts', { name: 'Big', plan: 'subscription_97' })).json().id;
    seen++;
    expect(
      (await ops.post(`/accounts/${big}/tokens`, { kind: 'charge', amount: 5 })).json().entry,
    ).toBeNull();
    await noneNew('unlimited charge');
    // A closed account takes no new key.
    await ops.patch(`/accounts/${big}`, { status: 'closed' });
    seen++;
    expect((await ops.post(`/accounts/${big}/keys`)).statusCode).toBe(409);
    await noneNew('key for a closed account');
  });

  it('names each admin token as its own actor', async () => {
    const id = (await ops.post('/accounts', { name: 'Acme' })).json().id;
    await billing.post(`/accounts/${id}/tokens`, { kind: 'grant', amount: 50 });
    await ops.patch(`/accounts/${id}`, { status: 'suspended' });
    const entries = await (async () =>
      (await billing.get(`/audit?account_id=${id}`)).json().data as AuditRecord[])();
    expect(entries.map((e) => [e.actor, e.action])).toEqual([
      ['admin:ops', 'account.create'],
      ['admin:billing', 'tokens.grant'],
      ['admin:ops', 'account.update'],
    ]);
  });

  it('never records an API key, its digest or its hint', async () => {
    const id = (await ops.post('/accounts', { name: 'Acme' })).json().id;
    const key = (await ops.post(`/accounts/${id}/keys`, { name: 'ci' })).json();
    await ops.del(`/keys/${key.id}`);
    const body = (await ops.get('/audit')).body;
    expect(body).toContain(key.id);
    expect(body).not.toContain(key.key);
    expect(body).not.toContain(key.key.slice(3));
    expect(body).not.toContain(digestKey(KEY_SECRET, key.key));
    expect(body).not.toContain(key.hint);
  });

  it('does not audit callers: get_account and metered tool calls are not admin actions', async () => {
    const { key, accountId } = await accountWithKey(h.services, { tokens: 10 });
    const call = (tool: string) => callTool(h.app, key, tool, {});
    expect((await call('get_account')).statusCode).toBe(200);
    expect((await call('test_lookup')).statusCode).toBe(200);
    expect((await h.store.accounts.get(accountId))?.tokenBalance).toBe(9);
    // accountWithKey used the services bare (no actor), so nothing at all is in the trail.
    expect(await trail()).toEqual([]);
  });

  describe('GET /admin/v1/audit', () => {
    it('lists oldest first (newest last), by account, a page at a time', async () => {
      const a = (await ops.post('/accounts', { name: 'A' })).json().id;
      h.clock.advance(1);
      const b = (await ops.post('/accounts', { name: 'B' })).json().id;
      h.clock.advance(1);
      await ops.patch(`/accounts/${a}`, { name: 'A2' });
      h.clock.advance(1);
      await ops.put('/plans/free', {
        limits: {
          enrich: { records: { '5h': 100, '1w': 500 }, requests: { '5h': 500 } },
          search: { records: { '5h': 50, '1w': 250 }, requests: { '5h': 250 } },
        },
      });
      const all = await trail();
      expect(all.map((e) => [e.action, e.account_id, e.at])).toEqual([
        ['account.create', a, '2026-04-15T13:55:29Z'],
        ['account.create', b, '2026-04-15T13:55:30Z'],
        ['account.update', a, '2026-04-15T13:55:31Z'],
        ['plan.put', null, '2026-04-15T13:55:32Z'],
      ]);
      expect(Object.keys(all[0]!)).toEqual([
        'id',
        'at',
        'actor',
        'action',
        'account_id',
        'target_id',
        'details',
      ]);
      expect(await trail(`?account_id=${a}`)).toEqual([all[0], all[2]]);
      expect(await trail(`?account_id=${b}`)).toEqual([all[1]]);
      expect(await trail('?limit=2')).toEqual(all.slice(0, 2));
      expect(await trail(`?limit=2&after=${all[1]!.id}`)).toEqual(all.slice(2));
      expect(await trail(`?account_id=${a}&after=${all[0]!.id}`)).toEqual([all[2]]);
    });

    it('answers 404 for an unknown account, 400 for a bad query, 401 without a token', async () => {
      const notFound = await ops.get('/audit?account_id=acc_nope');
      expect(notFound.statusCode).toBe(404);
      expect(notFound.json()).toMatchObject({ code: 'not_found', message: 'No account "acc_nope".' });
      for (const q of ['?limit=0', '?limit=abc', '?limit=501', '?account=x']) {
        const res = await ops.get(`/audit${q}`);
        expect(res.statusCode, q).toBe(400);
        expect(res.json().code, q).toBe('invalid_arguments');
      }
      const anon = await h.app.inject({ method: 'GET', url: '/admin/v1/audit' });
      expect(anon.statusCode).toBe(401);
      expect(anon.json().code).toBe('invalid_admin_token');
    });
  });
});
