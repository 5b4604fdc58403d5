import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestKey } from '../../src/domain/api-keys.js';
import { scratchDir } from '../helpers.js';
import { startServer } from './process.js';

const OPS = 'ops-token-0123456789abcdef';
const CI = 'ci-token-fedcba9876543210';
const SECRET = 'logs-key-secret-0123456789abcdef0123456789';
const LIMITS = {
  enrich: { records: { '5h': 10, '1w': 20 }, requests: { '5h': 10 } },
  search: { records: { '5h': 10, '1w': 20 }, requests: { '5h': 10 } },
};

describe('secrets never reach the logs', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = scratchDir());
  });
  afterEach(() => cleanup());

  it('after a run at trace level that called every route with keys and admin tokens', async () => {
    const server = await startServer({
      TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
      TOOLGATE_ADMIN_TOKEN: `ops:${OPS},ci:${CI}`,
      TOOLGATE_KEY_SECRET: SECRET,
      NODE_ENV: 'production',
      LOG_LEVEL: 'trace',
    });
    const keys: string[] = [];
    const call = async (method: string, path: string, auth: string, body?: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${auth}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      for (const m of text.matchAll(/"key":"(tg_[0-9A-Za-z]{11})"/g)) keys.push(m[1]!);
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };

    const account = (await call('POST', '/admin/v1/accounts', OPS, { name: 'logs', tokens: 10 })).body;
    const key = (await call('POST', `/admin/v1/accounts/${account.id}/keys`, CI, {})).body;
    const spare = (await call('POST', `/admin/v1/accounts/${account.id}/keys`, OPS, { name: 'spare' })).body;
    const user = (
      await call('POST', `/admin/v1/accounts/${account.id}/users`, OPS, { email: 'a@example.com' })
    ).body;

    // Every documented operation, with the ids it needs and a plausible body.
    const doc = (await call('GET', '/openapi.json', OPS)).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const bodies: Record<string, unknown> = {
      'POST /admin/v1/accounts': { name: 'another' },
      'PATCH /admin/v1/accounts/{id}': { name: 'renamed' },
      'POST /admin/v1/accounts/{id}/keys': { name: 'more' },
      'POST /admin/v1/accounts/{id}/users': { email: 'b@example.com' },
      'POST /admin/v1/accounts/{id}/tokens': { kind: 'charge', amount: 1, idempotency_key: 'logs-1' },
      'POST /admin/v1/accounts/{id}/usage': { category: 'enrich', records: 1 },
      'PUT /admin/v1/plans/{id}': { limits: LIMITS },
      'POST /api/v1/tools/get_account': {},
    };
    const exercised: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const method of Object.keys(operations)) {
        const op = `${method.toUpperCase()} ${path}`;
        const concrete = path
          .replace('{id}', path.startsWith('/admin/v1/plans') ? 'logs_plan' : account.id)
          .replace('{key_id}', spare.id)
          .replace('{user_id}', user.id);
        const auth = path.startsWith('/api/') ? key.key : OPS;
        const res = await call(method.toUpperCase(), concrete, auth, bodies[op]);
        expect(res.status, op).toBeLessThan(500);
        exercised.push(op);
        // The same route with credentials that are wrong in every way.
        await call(method.toUpperCase(), concrete, path.startsWith('/api/') ? OPS : key.key, bodies[op]);
      }
    }
    await call('POST', '/api/v1/tools/get_account', 'tg_AAAAAAAAAAA', {});
    await call('POST', '/api/v1/tools/no_such_tool', key.key, {});
    await call('GET', '/api/v1/tools/get_account', key.key);
    expect(exercised).toEqual(expect.arrayContaining(['POST /api/v1/tools/get_account', 'GET /healthz']));
    expect(exercised.filter((o) => o.includes('/admin/')).length).toBeGreaterThanOrEqual(14);
    expect(await server.stop()).toBe(0);

    const logs = server.stdout() + server.stderr();
    expect(logs.split('\n').filter(Boolean).length).toBeGreaterThan(exercised.length);
    expect(keys.length).toBeGreaterThanOrEqual(3);
    const secrets = [
      ...keys,
      ...keys.map((k) => digestKey(SECRET, k)),
      ...keys.map((k) => k.slice(3)),
      OPS,
      CI,
      SECRET,
    ];
    for (const s of secrets) expect(logs.includes(s), `found in the logs: ${s.slice(0, 6)}…`).toBe(false);
    expect(logs.toLowerCase()).not.toContain('bearer');
  });
});
