import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { FixedClock } from '../../src/domain/clock.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { createServices, type Services } from '../../src/service/index.js';
import type { DataTool } from '../../src/tools/tool.js';
import { admin, bearer, callTool, send } from '../calls.js';
import { exchange } from '../fuzz/raw-http.js';
import {
  ADMIN_TOKEN,
  type AppHarness,
  accountWithKey,
  KEY_SECRET,
  scratchApp,
  scratchServices,
  T0,
} from '../helpers.js';
import { postgresAvailable, scratchPostgresStore } from '../postgres.js';

/** Sends raw bytes to a listening app and returns what came back. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let out = '';
    socket.on('data', (d) => {
      out += d;
    });
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

describe('slow clients', () => {
  it('get 408 request_timeout in JSON when headers or body do not arrive in time, and the connection closes', async () => {
    const h = await scratchServices();
    const app = await buildApp({
      services: h.services,
      adminToken: null,
      timeouts: { headersMs: 300, requestMs: 600 },
    });
    try {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = (app.server.address() as { port: number }).port;
      const { key } = await accountWithKey(h.services);
      // Headers never finished; then (past authentication) a body that never finishes.
      for (const partial of [
        'POST /api/v1/tools/get_account HTTP/1.1\r\nHost: x\r\n',
        `POST /api/v1/tools/get_account HTTP/1.1\r\nHost: x\r\nAuthorization: ${bearer(key)}\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{`,
      ]) {
        const reply = await raw(port, partial);
        expect(reply).toMatch(/^HTTP\/1.1 408 Request Timeout/);
        expect(JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4))).toMatchObject({
          code: 'request_timeout',
        });
      }
    } finally {
      await app.close();
      await h.close();
    }
  });
});

describe('errors outside the routes keep the JSON shape', () => {
  let h: AppHarness;
  beforeEach(async () => {
    h = await scratchApp();
  });
  afterEach(async () => h.close());

  it('authenticates before telling whether a tool exists', async () => {
    const anonymous = await h.app.inject({ method: 'POST', url: '/api/v1/tools/no_such_tool', payload: {} });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().code).toBe('missing_api_key');
    const { key } = await accountWithKey(h.services);
    const known = await callTool(h.app, key, 'no_such_tool');
    expect(known.json().code).toBe('unknown_tool');
  });

  it('answers a malformed URL with 400 invalid_arguments, the JSON body and a request id', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/tools/%zz' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      status: 'error',
      code: 'invalid_arguments',
      request_id: res.headers['x-request-id'],
    });
  });

  it('takes an absent body as {} on the admin API too', async () => {
    const { accountId } = await accountWithKey(h.services);
    const res = await send(h.app, ADMIN_TOKEN, 'POST', `/admin/v1/accounts/${accountId}/keys`);
    expect(res.statusCode).toBe(201);
  });

  it('names the unknown category in a usage refusal', async () => {
    const { accountId } = await accountWithKey(h.services);
    const res = await admin(h.app, ADMIN_TOKEN).post(`/accounts/${accountId}/usage`, { category: 'browse' });
    expect(res.json()).toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringContaining('browse'),
    });
  });

  it('answers headers over the limit with 431 headers_too_large in JSON, on a real socket', async () => {
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (h.app.server.address() as { port: number }).port;
    const reply = await raw(
      port,
      `POST /api/v1/tools/get_account HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(20_000)}\r\nContent-Length: 0\r\n\r\n`,
    );
    expect(reply).toMatch(/^HTTP\/1.1 431 Request Header Fields Too Large/);
    expect(reply).toMatch(/x-request-id: req_/);
    expect(JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4))).toMatchObject({
      status: 'error',
      code: 'headers_too_large',
    });
  });

  it('refuses JSON nested deeper than 32 levels before parsing it, deep as it may be', async () => {
    const { key } = await accountWithKey(h.services);
    const post = (payload: string) => callTool(h.app, key, 'get_account', undefined, { rawBody: payload });
    const nested = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    expect((await post(nested(32))).json().code).toBe('invalid_arguments');
    for (const deep of [
      nested(33),
      '['.repeat(60_000),
      `{"s":"[[[[","x":${'['.repeat(40)}${']'.repeat(40)}}`,
    ]) {
      const res = await post(deep);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_json', message: expect.stringContaining('32') });
    }
    // Brackets inside strings do not count.
    expect((await post(`{"a":"${'['.repeat(100)}"}`)).json().code).toBe('invalid_arguments');
  });

  it('answers malformed HTTP with 400 in JSON, on a real socket', async () => {
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (h.app.server.address() as { port: number }).port;
    const reply = await raw(port, 'NOT HTTP AT ALL\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1.1 400 Bad Request/);
    expect(JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4))).toMatchObject({
      code: 'invalid_arguments',
    });
  });
});

/** A test-only tool costing 2 tokens a call, so a charge shows in the balance. */
const charged: DataTool = {
  kind: 'data',
  name: 'test_charged',
  summary: 'test only',
  description: 'costs 2 tokens per call',
  args: Type.Object({}, { additionalProperties: false }),
  results: Type.Object({ hits: Type.Integer() }),
  metered: { category: 'search', tokenCost: () => 2 },
  async run() {
    return { results: { hits: 1 }, records: 1 };
  },
};

/** Bytes that are no request, each written right after a complete request in the same write. */
const STRAY = [
  'XX',
  '\u0000\u0001\u0002',
  'NOT HTTP AT ALL\r\n\r\n',
  'GET /healthz HTTP/1.1\r\nNoColonHere\r\n\r\n',
  'POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
];

/** The status of each answer in what came back, in order. */
const statuses = (out: Buffer) =>
  [...out.toString('latin1').matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));

const backends: {
  name: string;
  skip: boolean;
  services: () => Promise<{ services: Services; close(): Promise<void> }>;
}[] = [
  { name: 'SQLite', skip: false, services: () => scratchServices() },
  {
    name: 'PostgreSQL',
    skip: !(await postgresAvailable()),
    async services() {
      const { store, cleanup } = scratchPostgresStore();
      await store.migrate(DEFAULT_PLANS, Math.floor(T0 / 1000));
      const services = createServices({
        store,
        clock: new FixedClock(T0),
        keyPrefix: 'tg',
        keySecret: KEY_SECRET,
      });
      return { services, close: cleanup };
    },
  },
];

for (const backend of backends) {
  describe.skipIf(backend.skip)(`stray bytes after a complete request (${backend.name})`, () => {
    let close: () => Promise<void>;
    let services: Services;
    let app: FastifyInstance;
    let port: number;
    beforeEach(async () => {
      const b = await backend.services();
      services = b.services;
      app = await buildApp({ services, adminToken: ADMIN_TOKEN, tools: [charged] });
      await app.listen({ port: 0, host: '127.0.0.1' });
      port = (app.server.address() as { port: number }).port;
      close = async () => {
        await app.close();
        await b.close();
      };
    });
    afterEach(async () => close());

    const balance = async (accountId: string) => {
      const a = await services.accounts.get(accountId);
      if (!a.ok) throw new Error('no account');
      return a.value.token_balance;
    };

    it('answer the tool call first (200, charged once), then 400 for the stray bytes', async () => {
      const { key, accountId } = await accountWithKey(services, { tokens: 100 });
      for (const stray of STRAY) {
        const request = `POST /api/v1/tools/test_charged HTTP/1.1\r\nHost: x\r\nAuthorization: ${bearer(key)}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`;
        // A client that half-closes before its answer gets none from Node: it waits 3 s first.
        const { out } = await exchange(port, Buffer.from(request + stray, 'latin1'), 3_000);
        expect(statuses(out), JSON.stringify(stray)).toEqual([200, 400]);
      }
      // Each call answered 200 was charged once, and nothing else was.
      expect(await balance(accountId)).toBe(100 - 2 * STRAY.length);
    });

    it('answer the token grant first (201), then 400: what was granted is what was answered', async () => {
      const { accountId } = await accountWithKey(services);
      const body = '{"kind":"grant","amount":777}';
      const request = `POST /admin/v1/accounts/${accountId}/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: ${bearer(ADMIN_TOKEN)}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      const { out } = await exchange(port, Buffer.from(`${request}XX`, 'latin1'), 3_000);
      expect(statuses(out)).toEqual([201, 400]);
      expect(out.toString('latin1')).toMatch(/"balance_after":777/);
      expect(await balance(accountId)).toBe(777);
    });
  });
}
