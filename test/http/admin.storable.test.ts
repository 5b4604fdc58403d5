/**
 * Strings PostgreSQL cannot store (NUL, unpaired surrogates) anywhere in an admin request: every
 * string member of every admin body, every path parameter and every query parameter. One table of
 * cases runs on SQLite and on PostgreSQL; each case is 400 invalid_arguments naming the field on
 * both, never a 500, and nothing of it is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../calls.js';
import { ADMIN_TOKEN } from '../helpers.js';
import { type BackendApp, backends } from './admin.backends.js';
import { admin } from './admin.test-helpers.js';

/** The characters, as a JavaScript string (a JSON body escapes them) and percent-encoded in a URL (WTF-8 for the surrogates). */
const BAD = [
  { what: 'NUL', text: '\u0000', url: '%00' },
  { what: 'U+D800 alone', text: '\ud800', url: '%ED%A0%80' },
  { what: 'U+DFFF alone', text: '\udfff', url: '%ED%BF%BF' },
] as const;

interface Fixture {
  account: string;
  key: string;
  user: string;
}

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

interface Case {
  /** The method and path, with the fixture's ids. */
  method: Method;
  path: (f: Fixture, bad: (typeof BAD)[number]) => string;
  body?: (bad: string) => unknown;
  /** The field the refusal names. */
  field: string;
}

const tool = (over: Record<string, unknown> = {}) => ({
  description: 'Find people.',
  input_schema: { type: 'object', properties: { q: { type: 'string' } } },
  upstream: { url: 'http://127.0.0.1:9/people', headers: { 'X-Api-Key': 'k' } },
  metering: { category: 'search', tokens_per_record: 1 },
  ...over,
});

/** Every string member of every admin body that takes one. */
const BODY_CASES: Case[] = [
  { method: 'POST', path: () => '/accounts', body: (b) => ({ name: `A${b}cme` }), field: 'name' },
  {
    method: 'POST',
    path: () => '/accounts',
    body: (b) => ({ name: 'Acme', plan: `free${b}` }),
    field: 'plan',
  },
  { method: 'PATCH', path: (f) => `/accounts/${f.account}`, body: (b) => ({ name: `A${b}` }), field: 'name' },
  { method: 'PATCH', path: (f) => `/accounts/${f.account}`, body: (b) => ({ plan: `${b}` }), field: 'plan' },
  {
    method: 'POST',
    path: (f) => `/accounts/${f.account}/keys`,
    body: (b) => ({ name: `ci${b}` }),
    field: 'name',
  },
  {
    method: 'POST',
    path: (f) => `/accounts/${f.account}/users`,
    body: (b) => ({ email: `a${b}@example.com` }),
    field: 'email',
  },
  {
    method: 'POST',
    path: (f) => `/accounts/${f.account}/tokens`,
    body: (b) => ({ kind: 'grant', amount: 1, reason: `why${b}` }),
    field: 'reason',
  },
  {
    method: 'POST',
    path: (f) => `/accounts/${f.account}/tokens`,
    body: (b) => ({ kind: 'grant', amount: 1, idempotency_key: `k${b}` }),
    field: 'idempotency_key',
  },
  {
    method: 'POST',
    path: (f) => `/accounts/${f.account}/usage`,
    body: (b) => ({ category: `enrich${b}`, records: 1 }),
    field: 'category',
  },
  {
    method: 'POST',
    path: (f) => `/accounts/${f.account}/usage`,
    body: (b) => ({ category: 'enrich', records: 1, idempotency_key: `k${b}` }),
    field: 'idempotency_key',
  },
  {
    method: 'PUT',
    path: () => '/plans/team',
    body: (b) => ({ limits: { [`enrich${b}`]: { records: { '5h': 1 } } } }),
    field: 'limits',
  },
  {
    method: 'PUT',
    path: () => '/tools/people',
    body: (b) => tool({ description: `Find${b}` }),
    field: 'description',
  },
  {
    method: 'PUT',
    path: () => '/tools/people',
    body: (b) => tool({ metering: { category: 'search', records_pointer: `/results${b}` } }),
    field: 'metering.records_pointer',
  },
  {
    method: 'PUT',
    path: () => '/tools/people',
    body: (b) => tool({ upstream: { url: 'http://127.0.0.1:9/people', headers: { 'X-Api-Key': `k${b}` } } }),
    field: 'upstream.headers.X-Api-Key',
  },
  {
    method: 'PUT',
    path: () => '/tools/people',
    body: (b) => tool({ input_schema: { type: 'object', properties: { [`q${b}`]: { type: 'string' } } } }),
    field: 'input_schema.properties',
  },
  { method: 'POST', path: () => '/keys/verify', body: (b) => ({ key: `tg_${b}` }), field: 'key' },
  {
    method: 'POST',
    path: () => '/webhooks',
    body: (b) => ({ url: `http://127.0.0.1:9/${b}` }),
    field: 'url',
  },
  {
    method: 'POST',
    path: () => '/webhooks',
    body: (b) => ({ url: 'http://127.0.0.1:9/', events: ['tokens.low_balance', `x${b}`] }),
    field: 'events.1',
  },
  {
    method: 'POST',
    path: () => '/webhooks',
    body: (b) => ({ url: 'http://127.0.0.1:9/', account_id: `acc_${b}` }),
    field: 'account_id',
  },
];

/** Every path parameter of every admin route. */
const PATH_CASES: Case[] = (
  [
    ['GET', (x) => `/accounts/${x}`, 'id'],
    ['PATCH', (x) => `/accounts/${x}`, 'id', { name: 'n' }],
    ['POST', (x) => `/accounts/${x}/keys`, 'id', {}],
    ['GET', (x) => `/accounts/${x}/keys`, 'id'],
    ['POST', (x) => `/accounts/${x}/users`, 'id', { email: 'a@example.com' }],
    ['GET', (x) => `/accounts/${x}/users`, 'id'],
    ['POST', (x) => `/accounts/${x}/tokens`, 'id', { kind: 'grant', amount: 1 }],
    ['GET', (x) => `/accounts/${x}/tokens`, 'id'],
    ['POST', (x) => `/accounts/${x}/usage`, 'id', { category: 'enrich', records: 1 }],
    ['GET', (x) => `/accounts/${x}/usage/history`, 'id'],
    ['DELETE', (x) => `/keys/${x}`, 'key_id'],
    ['DELETE', (x) => `/users/${x}`, 'user_id'],
    ['PUT', (x) => `/plans/${x}`, 'id', { limits: {} }],
    ['GET', (x) => `/tools/${x}`, 'name'],
    ['PUT', (x) => `/tools/${x}`, 'name', tool()],
    ['DELETE', (x) => `/tools/${x}`, 'name'],
    ['GET', (x) => `/webhooks/${x}`, 'id'],
    ['DELETE', (x) => `/webhooks/${x}`, 'id'],
    ['GET', (x) => `/webhooks/${x}/deliveries`, 'id'],
    ['POST', (x) => `/webhook-deliveries/${x}/replay`, 'id'],
  ] as [Method, (x: string) => string, string, unknown?][]
).map(([method, at, field, body]) => ({
  method,
  path: (_f, bad) => at(`x${bad.url}y`),
  ...(body === undefined ? {} : { body: () => body }),
  field,
}));

/** Every query parameter of every admin route that takes one. */
const QUERY_CASES: Case[] = (
  [
    [() => '/accounts?after=', 'after'],
    [(f: Fixture) => `/accounts/${f.account}/tokens?after=`, 'after'],
    [(f: Fixture) => `/accounts/${f.account}/usage/history?from=`, 'from'],
    [(f: Fixture) => `/accounts/${f.account}/usage/history?by=`, 'by'],
    [() => '/audit?account_id=', 'account_id'],
    [() => '/audit?after=', 'after'],
    [() => '/webhooks?account_id=', 'account_id'],
  ] as [(f: Fixture) => string, string][]
).map(([at, field]) => ({ method: 'GET', path: (f, bad) => `${at(f)}x${bad.url}y`, field }));

interface Run {
  label: string;
  status: number;
  code: unknown;
  message: unknown;
}

const available = await backends();
const results = new Map<string, Run[]>();

for (const backend of available) {
  describe(`admin strings PostgreSQL cannot store, on ${backend.name}`, () => {
    let h: BackendApp;
    let f: Fixture;
    const runs: Run[] = [];
    results.set(backend.name, runs);

    beforeAll(async () => {
      h = await backend.make();
      const a = admin(h);
      const account = (await a.post('/accounts', { name: 'Storable', tokens: 10 })).json().id as string;
      const key = (await a.post(`/accounts/${account}/keys`, { name: 'ci' })).json().id as string;
      const user = (await a.post(`/accounts/${account}/users`, { email: 'u@example.com' })).json()
        .id as string;
      f = { account, key, user };
    });
    afterAll(async () => {
      await h?.close();
    });

    const table = [
      ...BODY_CASES.map((c) => ({ ...c, kind: 'body' })),
      ...PATH_CASES.map((c) => ({ ...c, kind: 'path' })),
      ...QUERY_CASES.map((c) => ({ ...c, kind: 'query' })),
    ];

    it(`answers each of ${table.length * BAD.length} requests 400 invalid_arguments naming the field`, async () => {
      const wrong: string[] = [];
      for (const c of table) {
        for (const bad of BAD) {
          const url = `/admin/v1${c.path(f, bad)}`;
          const res = await send(
            h.app,
            ADMIN_TOKEN,
            c.method,
            url,
            c.body ? c.body(`x${bad.text}y`) : undefined,
          );
          const body = res.json() as { code?: string; message?: string };
          const label = `${c.method} ${url} ${c.kind === 'body' ? `${c.field}=${bad.what}` : ''}`;
          runs.push({ label, status: res.statusCode, code: body.code, message: body.message });
          if (
            res.statusCode !== 400 ||
            body.code !== 'invalid_arguments' ||
            !body.message?.startsWith(`Invalid arguments: ${c.field} `)
          )
            wrong.push(`${label} -> ${res.statusCode} ${body.code}: ${body.message}`);
        }
      }
      expect(wrong, `${wrong.length} of ${table.length * BAD.length} wrong`).toEqual([]);
    });

    it('wrote nothing of them: the account, its ledger, keys, users and the audit trail are as before', async () => {
      const a = admin(h);
      const account = (await a.get(`/accounts/${f.account}`)).json();
      expect(account).toMatchObject({ name: 'Storable', token_balance: 10, plan: 'free' });
      expect((await a.get(`/accounts/${f.account}/tokens`)).json().data).toHaveLength(1);
      expect((await a.get(`/accounts/${f.account}/keys`)).json().data).toHaveLength(1);
      expect((await a.get(`/accounts/${f.account}/users`)).json().data).toHaveLength(1);
      expect((await a.get('/tools')).json().data).toEqual([]);
      expect((await a.get('/webhooks')).json().data).toEqual([]);
      const actions = ((await a.get('/audit')).json().data as { action: string }[]).map((e) => e.action);
      expect(actions).toEqual(['account.create', 'key.create', 'user.add']);
    });
  });
}

describe('both backends', () => {
  it.skipIf(available.length < 2)('answer every case with the same status and code', () => {
    const [sqlite, postgres] = [results.get('SQLite') ?? [], results.get('PostgreSQL') ?? []];
    expect(postgres.length).toBe(sqlite.length);
    const differ = sqlite
      .map((s, i) => [s, postgres[i]] as const)
      .filter(([s, p]) => s.status !== p?.status || s.code !== p?.code)
      .map(([s, p]) => `${s.label}: SQLite ${s.status} ${s.code}, PostgreSQL ${p?.status} ${p?.code}`);
    expect(differ, `${differ.length} of ${sqlite.length} differ`).toEqual([]);
  });
});
