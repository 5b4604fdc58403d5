import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestKey } from '../../src/domain/api-keys.js';
import { send } from '../calls.js';
import { scratchDir } from '../helpers.js';
import { startFakeStripe } from '../payments/fake-stripe.js';
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
    // Payments on, against a local Stripe: its secret key and signing secret must not be logged either.
    const stripe = await startFakeStripe();
    const price = stripe.addPrice({ type: 'one_time', unitAmount: 500 });
    const server = await startServer({
      TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
      TOOLGATE_ADMIN_TOKEN: `ops:${OPS},ci:${CI}`,
      TOOLGATE_KEY_SECRET: SECRET,
      TOOLGATE_STRIPE_SECRET_KEY: stripe.secretKey,
      TOOLGATE_STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
      TOOLGATE_STRIPE_API_URL: stripe.url,
      NODE_ENV: 'production',
      LOG_LEVEL: 'trace',
    });
    const keys: string[] = [];
    const call = async (method: string, path: string, auth: string, body?: unknown) => {
      const res = await send(server.url, auth, method, path, body);
      const text = res.body;
      for (const m of text.matchAll(/"key":"(tg_[0-9A-Za-z]{11})"/g)) keys.push(m[1]!);
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };

    const account = (await call('POST', '/admin/v1/accounts', OPS, { name: 'logs', tokens: 10 })).body;
    const key = (await call('POST', `/admin/v1/accounts/${account.id}/keys`, CI, {})).body;
    const spare = (await call('POST', `/admin/v1/accounts/${account.id}/keys`, OPS, { name: 'spare' })).body;
    const user = (
      await call('POST', `/admin/v1/accounts/${account.id}/users`, OPS, { email: 'a@example.com' })
    ).body;

    // A pack priced in Stripe (before the walk below spends the address's failed-authentication budget).
    expect(
      (await call('PUT', '/admin/v1/topups/small', OPS, { tokens: 5, stripe_price: price.id })).status,
    ).toBe(200);

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
    const event = stripe.event('customer.created', { id: 'cus_logs', object: 'customer' });
    expect((await stripe.deliver(`${server.url}/webhooks/stripe`, event)).status).toBe(200);
    expect(
      (await stripe.deliver(`${server.url}/webhooks/stripe`, event, { secret: 'whsec_wrong' })).status,
    ).toBe(400);
    expect(stripe.requests.some((r) => r.path === `/v1/prices/${price.id}`)).toBe(true);
    await stripe.close();
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
      stripe.secretKey,
      stripe.webhookSecret,
    ];
    for (const s of secrets) expect(logs.includes(s), `found in the logs: ${s.slice(0, 6)}…`).toBe(false);
    expect(logs.toLowerCase()).not.toContain('bearer');
  });

  it('at info: a key or admin token in the query string or in a Host header that is no host name', async () => {
    const server = await startServer({
      TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
      TOOLGATE_ADMIN_TOKEN: `ops:${OPS}`,
      TOOLGATE_KEY_SECRET: SECRET,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
    });
    const admin = (method: string, path: string, body?: unknown) =>
      send(server.url, OPS, method, path, body, { headers: { 'content-type': 'application/json' } }).then(
        (r) => r.json() as { id: string; key: string },
      );
    const account = await admin('POST', '/admin/v1/accounts', { name: 'logs' });
    const { key } = await admin('POST', `/admin/v1/accounts/${account.id}/keys`, {});
    /** One request with this Host header, on a socket of its own. */
    const withHost = (host: string) =>
      new Promise<string>((resolve) => {
        const { port } = new URL(server.url);
        const socket = connect(Number(port), '127.0.0.1', () =>
          socket.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
        );
        let out = '';
        socket.on('data', (d) => {
          out += d;
        });
        socket.on('close', () => resolve(out));
      });

    await fetch(`${server.url}/healthz?key=${key}`);
    await send(server.url, key, 'POST', `/api/v1/tools/get_account?api_key=${key}`);
    await fetch(`${server.url}/no/such/route?token=${key}`);
    await send(server.url, OPS, 'GET', `/admin/v1/plans?admin_token=${OPS}`);
    expect(await withHost(key)).toMatch(/^HTTP\/1\.1 200 /);
    expect(await withHost(`x:${OPS}@y`)).toMatch(/^HTTP\/1\.1 200 /);
    expect(await withHost('api.example.com:8080')).toMatch(/^HTTP\/1\.1 200 /);
    expect(await server.stop()).toBe(0);

    const lines = server.stdout().split('\n').filter(Boolean);
    for (const [name, secret] of [
      ['a key', key],
      ['a key without its prefix', key.slice(3)],
      ['the admin token', OPS],
    ] as const) {
      const holding = lines.filter((l) => l.includes(secret));
      expect(holding, `lines with ${name}`).toEqual([]);
    }
    // The path is still there, without its query; a host name is still logged as it is.
    const incoming = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'incoming request');
    const urls = incoming.map((l) => l.req.url);
    expect(urls).toEqual(expect.arrayContaining(['/healthz', '/api/v1/tools/get_account', '/no/such/route']));
    expect(incoming.map((l) => l.req.host)).toContain('api.example.com:8080');
  });
});
