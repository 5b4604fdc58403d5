import Database from 'better-sqlite3';
import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Tool } from '../../src/tools/tool.js';
import { admin, bearer, callTool, send } from '../calls.js';
import { ADMIN_TOKEN, type AppHarness, accountWithKey, scratchApp } from '../helpers.js';

const ERROR_SHAPE = {
  status: 'error',
  error: expect.any(String),
  code: expect.any(String),
  message: expect.any(String),
  request_id: expect.stringMatching(/^req_/),
};

const exploding: Tool = {
  kind: 'account',
  name: 'explode',
  summary: 'test only',
  description: 'throws an unexpected error',
  args: Type.Object({}, { additionalProperties: false }),
  response: Type.Object({}),
  async run() {
    throw new Error('secret internals: /var/lib/db password=hunter2');
  },
};

describe('get_account, errors', () => {
  let h: AppHarness;
  let key: string;
  beforeEach(async () => {
    h = await scratchApp();
    key = (await accountWithKey(h.services)).key;
  });
  afterEach(async () => h.close());

  const post = (
    payload: string | undefined,
    headers: Record<string, string> = {},
    url = '/api/v1/tools/get_account',
  ) =>
    send(h.app, key, 'POST', url, undefined, {
      headers: { 'content-type': 'application/json', ...headers },
      ...(payload === undefined ? {} : { raw: payload }),
    });

  const expectError = (res: Awaited<ReturnType<typeof post>>, status: number, code: string) => {
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json();
    expect(body).toMatchObject({ ...ERROR_SHAPE, code });
    expect(body.request_id).toBe(res.headers['x-request-id']);
    return body;
  };

  it('answers 400 invalid_json for a body that is not JSON', async () => {
    for (const bad of ['{', '{"a":}', 'nope', '{"a":1,}']) expectError(await post(bad), 400, 'invalid_json');
  });

  it('answers 400 invalid_arguments for a body that is not an object', async () => {
    for (const bad of ['[]', 'null', '"x"', '42', 'true'])
      expectError(await post(bad), 400, 'invalid_arguments');
  });

  it('answers 400 invalid_arguments naming an unknown member: get_account takes none', async () => {
    const body = expectError(await post('{"account_id":"acc_x"}'), 400, 'invalid_arguments');
    expect(body.message).toContain('account_id');
  });

  it('answers 401 missing_api_key without an Authorization header', async () => {
    const res = await send(h.app, null, 'POST', '/api/v1/tools/get_account', {});
    const body = expectError(res, 401, 'missing_api_key');
    expect(body.error).toBe('Unauthorized');
    expect(body.message).toBe('Invalid or missing API key.');
  });

  it('answers 401 invalid_api_key with one message for malformed, unknown and revoked keys', async () => {
    const { keyId, key: revoked } = await accountWithKey(h.services, { name: 'Other' });
    await h.services.keys.revoke(keyId);
    const cases = [
      bearer(revoked),
      bearer('tg_AAAAAAAAAAA'),
      bearer('tg_short'),
      bearer('xx_AAAAAAAAAAA'),
      `${bearer(key)}x`,
      `Basic ${key}`,
      key,
      bearer('tg_AAAAAAAAAA!'),
    ];
    const messages = new Set<string>();
    for (const authorization of cases) {
      const body = expectError(await post('{}', { authorization }), 401, 'invalid_api_key');
      messages.add(body.message);
    }
    expect([...messages]).toEqual(['Invalid or missing API key.']);
  });

  it('answers 404 unknown_tool for a tool that is not registered, and 404 not_found elsewhere', async () => {
    const body = expectError(await post('{}', {}, '/api/v1/tools/get_acount'), 404, 'unknown_tool');
    expect(body.message).toContain('get_acount');
    expectError(await post('{}', {}, '/api/v2/tools/get_account'), 404, 'not_found');
    expectError(await send(h.app, null, 'GET', '/nowhere'), 404, 'not_found');
  });

  it('answers 405 method_not_allowed with Allow: POST for other methods', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH'] as const) {
      const res = await send(h.app, null, method, '/api/v1/tools/get_account');
      expectError(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toBe('POST');
    }
  });

  it('answers 413 payload_too_large for a body over the limit', async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(70_000) });
    expectError(await post(big), 413, 'payload_too_large');
  });

  it('answers 415 unsupported_media_type for a body that is not application/json', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/xml',
      'multipart/form-data; boundary=x',
    ]) {
      expectError(await post('{}', { 'content-type': type }), 415, 'unsupported_media_type');
    }
  });

  it('answers 500 internal_error without leaking internals', async () => {
    const withTool = await scratchApp({ tools: [exploding] });
    try {
      const k = (await accountWithKey(withTool.services)).key;
      const res = await callTool(withTool.app, k, 'explode', {});
      const body = expectError(res, 500, 'internal_error');
      expect(res.body).not.toMatch(/hunter2|secret internals|\/var\/lib|stack/);
      expect(body.message).toBe('An internal error occurred.');
    } finally {
      await withTool.close();
    }
  });
});

describe('the store is down', () => {
  it('answers 503 unavailable while another process holds the write lock, and recovers by itself', async () => {
    const h = await scratchApp({ lockWaitMs: 200 });
    const { app, dbPath: path } = h;
    const { key, accountId } = await accountWithKey(h.services);
    const consume = () =>
      admin(app, ADMIN_TOKEN).post(`/accounts/${accountId}/usage`, { category: 'enrich', records: 1 });
    const blocker = new Database(path);
    try {
      blocker.exec('BEGIN IMMEDIATE');
      const down = await consume();
      expect(down.statusCode).toBe(503);
      expect(down.json()).toMatchObject({
        ...ERROR_SHAPE,
        code: 'unavailable',
        error: 'Service Unavailable',
      });
      expect(down.headers['retry-after']).toBe('1');
      // Reads go on under WAL while a writer holds the lock: callers can still check their account.
      const read = await callTool(app, key, 'get_account');
      expect(read.statusCode).toBe(200);
      expect(read.json().results.fair_use.enrich.records['5h'].used).toBe(0);

      // The other process lets go: the next request is served, with no restart.
      blocker.exec('COMMIT');
      expect((await consume()).statusCode).toBe(200);
    } finally {
      blocker.close();
      await h.close();
    }
  });

  it('keeps serving other requests while a write waits for another process to let go of the lock', async () => {
    const h = await scratchApp({ lockWaitMs: 30_000 });
    const { app, dbPath: path } = h;
    const { key, accountId } = await accountWithKey(h.services);
    const blocker = new Database(path);
    try {
      blocker.exec('BEGIN IMMEDIATE');
      let writeDone = false;
      const write = admin(app, ADMIN_TOKEN)
        .post(`/accounts/${accountId}/usage`, { category: 'enrich', records: 2 })
        .finally(() => {
          writeDone = true;
        });
      // The read is answered while the write is still waiting: the process is not frozen.
      const read = await callTool(app, key, 'get_account');
      expect(read.statusCode).toBe(200);
      expect(writeDone).toBe(false);
      blocker.exec('COMMIT');
      const written = await write;
      expect(written.statusCode).toBe(200);
      expect(written.json().fair_use.enrich.records['5h'].used).toBe(2);
    } finally {
      blocker.close();
      await h.close();
    }
  });

  it('answers 503 unavailable, not 500, once the database connection is gone', async () => {
    const h = await scratchApp();
    const { key } = await accountWithKey(h.services);
    await h.store.close();
    const res = await callTool(h.app, key, 'get_account');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ ...ERROR_SHAPE, code: 'unavailable' });
    expect((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(503);
    await h.close();
  });
});
