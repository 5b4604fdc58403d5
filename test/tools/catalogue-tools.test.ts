// biome-ignore-all lint/suspicious/noTemplateCurlyInString: catalogue placeholders, meant literally.
/**
 * Catalogue tools over the tools API, against a real upstream HTTP server: hits, both forms of miss,
 * every error class, what each consumes and charges, what is forwarded, and that a refused call
 * never reaches the upstream.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bearer, callTool } from '../calls.js';
import { type AppHarness, accountOnPlan, accountWithKey, scratchApp } from '../helpers.js';
import { sendJson, startTestUpstream, type TestUpstream } from '../upstream/test-upstream.js';

const people = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `P${i}` }));

function catalogue(upstream: string) {
  return {
    tools: [
      {
        name: 'search_people',
        description: 'Find people by title.',
        input_schema: {
          type: 'object',
          properties: { title: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
          required: ['title'],
          additionalProperties: false,
        },
        upstream: { url: `${upstream}/search`, headers: { Authorization: bearer('${PEOPLE_TOKEN}') } },
        metering: {
          category: 'search',
          expected_records_pointer: '/limit',
          tokens_per_call: 1,
          tokens_per_record: 2,
        },
      },
      {
        name: 'company_lookup',
        upstream: { url: `${upstream}/company`, timeout_ms: 300, max_response_bytes: 2048 },
        metering: { category: 'enrich', records_pointer: '/metadata/count', tokens_per_call: 3 },
      },
      { name: 'ping_free', upstream: { url: `${upstream}/free` } },
      {
        name: 'needs_secret',
        upstream: { url: `${upstream}/free`, headers: { 'X-Api': '${NOT_SET_ANYWHERE}' } },
      },
    ],
  };
}

describe('catalogue tools', () => {
  let upstream: TestUpstream;
  let h: AppHarness;
  beforeAll(async () => {
    upstream = await startTestUpstream();
  });
  afterAll(async () => upstream.close());
  beforeEach(async () => {
    upstream.reset();
    h = await scratchApp({
      catalogue: {
        env: { PEOPLE_TOKEN: 'upstream-secret' },
        // NOT_SET_ANYWHERE is allowed, and unset on this server.
        upstreamEnv: ['PEOPLE_TOKEN', 'NOT_SET_ANYWHERE'],
      },
    });
    const imported = await h.services.catalogue.import(catalogue(upstream.url));
    expect(imported.ok).toBe(true);
    upstream.on('search', (call, res) => {
      const { title, limit } = call.body as { title: string; limit?: number };
      if (title === 'nobody') return sendJson(res, 200, { results: [], status: 'not_found' });
      if (title === 'gone') return sendJson(res, 404, { results: null, metadata: { why: 'gone' } });
      if (title === 'broken') return sendJson(res, 503, { message: 'down' });
      if (title === 'rejected') return sendJson(res, 422, { message: 'title is too vague' });
      if (title === 'locked') return sendJson(res, 401, { message: 'bad upstream token' });
      if (title === 'garbage') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('{"results": [');
      }
      sendJson(res, 200, {
        results: people(limit ?? 3),
        metadata: { source: 'people-db', fair_use: 'theirs', tokens_charged: 999 },
      });
    });
    upstream.on('company', (call, res) => {
      const { domain } = call.body as { domain?: string };
      if (domain === 'slow.example')
        return new Promise((r) => setTimeout(() => r(sendJson(res, 200, {})), 1000));
      if (domain === 'huge.example') return sendJson(res, 200, { results: 'x'.repeat(10_000) });
      sendJson(res, 200, { results: { domain }, metadata: { count: 1 } });
    });
    upstream.on('free', (_call, res) => sendJson(res, 200, { results: { pong: true } }));
  });
  afterEach(async () => h.close());

  const call = (key: string, tool: string, body: unknown) => callTool(h.app, key, tool, body);
  const account = async (id: string) => {
    const a = await h.services.accounts.get(id);
    if (!a.ok) throw new Error('no account');
    return a.value;
  };

  it('a hit consumes the request and the records, charges per call and per record, and answers the envelope', async () => {
    const { key, accountId, keyId } = await accountWithKey(h.services, { tokens: 100 });
    const res = await call(key, 'search_people', { title: 'cto', limit: 4 });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.results).toEqual(people(4));
    expect(body.status).toBe('ok');
    // The upstream's metadata passes through; toolgate's own members win a clash.
    expect(body.metadata).toEqual({
      source: 'people-db',
      fair_use: {
        records_remaining_5h: 46,
        records_reset_5h: '2026-04-15T18:55:29Z',
        records_remaining_1w: 246,
        records_reset_1w: '2026-04-22T13:55:29Z',
      },
      tokens_charged: 9,
      tokens_remaining: 91,
    });
    const a = await account(accountId);
    expect(a.fair_use.search.requests['5h'].used).toBe(1);
    expect(a.fair_use.search.records['5h'].used).toBe(4);
    expect(a.token_balance).toBe(91);

    // What the upstream got: the arguments, toolgate's headers and the configured one; never the key.
    const [forwarded] = upstream.calls;
    expect(forwarded?.body).toEqual({ title: 'cto', limit: 4 });
    expect(forwarded?.headers).toMatchObject({
      'content-type': 'application/json',
      'x-request-id': res.headers['x-request-id'],
      'x-toolgate-account': accountId,
      'x-toolgate-key': keyId,
      'x-toolgate-tool': 'search_people',
      authorization: bearer('upstream-secret'),
    });
    expect(JSON.stringify(forwarded?.headers)).not.toContain(key);
  });

  it('counts records where the records pointer says, and charges per call without records', async () => {
    const { key, accountId } = await accountWithKey(h.services, { tokens: 10 });
    const res = await call(key, 'company_lookup', { domain: 'acme.example' });
    expect(res.statusCode).toBe(200);
    expect(res.json().metadata).toMatchObject({ count: 1, tokens_charged: 3, tokens_remaining: 7 });
    const a = await account(accountId);
    expect(a.fair_use.enrich.records['5h'].used).toBe(1);
    expect(a.fair_use.enrich.requests['5h'].used).toBe(1);
  });

  it('a miss (status not_found) is 200 not_found: the request counted, no records, no tokens', async () => {
    const { key, accountId } = await accountWithKey(h.services, { tokens: 100 });
    const res = await call(key, 'search_people', { title: 'nobody' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ results: [], status: 'not_found', metadata: { tokens_charged: 0 } });
    const a = await account(accountId);
    expect(a.fair_use.search.requests['5h'].used).toBe(1);
    expect(a.fair_use.search.records['5h'].used).toBe(0);
    expect(a.token_balance).toBe(100);
  });

  it('a miss answered 404 by the upstream is a 404 not_found envelope, counted the same', async () => {
    const { key, accountId } = await accountWithKey(h.services, { tokens: 100 });
    const res = await call(key, 'search_people', { title: 'gone' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({
      results: null,
      status: 'not_found',
      metadata: { why: 'gone', tokens_charged: 0, tokens_remaining: 100 },
    });
    expect((await account(accountId)).fair_use.search.requests['5h'].used).toBe(1);
  });

  describe('errors consume and charge nothing', () => {
    const cases: [string, string, unknown, number, string][] = [
      ['upstream 5xx', 'search_people', { title: 'broken' }, 502, 'upstream_error'],
      ['upstream 401', 'search_people', { title: 'locked' }, 502, 'upstream_error'],
      ['invalid JSON', 'search_people', { title: 'garbage' }, 502, 'upstream_error'],
      [
        'an answer over max_response_bytes',
        'company_lookup',
        { domain: 'huge.example' },
        502,
        'upstream_error',
      ],
      ['past timeout_ms', 'company_lookup', { domain: 'slow.example' }, 504, 'upstream_timeout'],
      ['upstream 422', 'search_people', { title: 'rejected' }, 400, 'invalid_arguments'],
    ];
    for (const [what, tool, args, status, code] of cases) {
      it(`${what}: ${status} ${code}`, async () => {
        const { key, accountId } = await accountWithKey(h.services, { tokens: 100 });
        const before = await account(accountId);
        const res = await call(key, tool, args);
        expect(res.statusCode).toBe(status);
        expect(res.json()).toMatchObject({ status: 'error', code });
        expect(await account(accountId)).toEqual(before);
      });
    }

    it("the upstream's 422 message is the caller's; its 401 is never shown as the caller's own", async () => {
      const { key } = await accountWithKey(h.services, { tokens: 100 });
      expect((await call(key, 'search_people', { title: 'rejected' })).json().message).toBe(
        'title is too vague',
      );
      const locked = (await call(key, 'search_people', { title: 'locked' })).json();
      expect(locked.message).not.toContain('bad upstream token');
    });

    it('a refused connection is 502 upstream_error', async () => {
      const closed = await startTestUpstream();
      await closed.close();
      const put = await h.services.catalogue.put('dead_end', { upstream: { url: `${closed.url}/x` } });
      expect(put.ok).toBe(true);
      const { key } = await accountWithKey(h.services);
      const res = await call(key, 'dead_end', {});
      expect(res.statusCode).toBe(502);
      expect(res.json().code).toBe('upstream_error');
    });
  });

  describe('refused before the upstream is called', () => {
    it('arguments that fail the input schema: 400 naming the member', async () => {
      const { key } = await accountWithKey(h.services, { tokens: 100 });
      const missing = await call(key, 'search_people', { limit: 3 });
      expect(missing.statusCode).toBe(400);
      expect(missing.json()).toMatchObject({
        code: 'invalid_arguments',
        message: 'Missing argument "title".',
      });
      expect((await call(key, 'search_people', { title: 'x', extra: 1 })).json().message).toBe(
        'Unknown argument "extra".',
      );
      expect((await call(key, 'search_people', { title: 'x', limit: 500 })).json().message).toBe(
        'Invalid arguments: limit must be <= 100.',
      );
      expect((await call(key, 'search_people', [1, 2])).json().message).toBe(
        'The arguments must be a JSON object.',
      );
      expect(upstream.calls).toHaveLength(0);
    });

    it('not enough tokens for the expected records: 402', async () => {
      const { key } = await accountWithKey(h.services, { tokens: 10 });
      // 1 per call + 2 per record x 5 expected = 11 > 10.
      const res = await call(key, 'search_people', { title: 'cto', limit: 5 });
      expect(res.statusCode).toBe(402);
      expect(upstream.calls).toHaveLength(0);
    });

    it('a fair-use window that the expected records would pass: 429', async () => {
      const { key } = await accountWithKey(h.services, { tokens: 1000 });
      // The free plan allows 50 search records per 5h.
      expect((await call(key, 'search_people', { title: 'cto', limit: 60 })).statusCode).toBe(429);
      const res = await call(key, 'search_people', { title: 'cto', limit: 40 });
      expect(res.statusCode).toBe(200);
      const over = await call(key, 'search_people', { title: 'cto', limit: 20 });
      expect(over.statusCode).toBe(429);
      expect(over.json().code).toBe('fair_use_exceeded');
      expect(upstream.calls).toHaveLength(1);
    });

    it('a suspended account: 403, free tools included', async () => {
      const { key, accountId } = await accountWithKey(h.services, { tokens: 100 });
      await h.services.accounts.update(accountId, { status: 'suspended' });
      expect((await call(key, 'search_people', { title: 'cto' })).json().code).toBe('account_suspended');
      expect((await call(key, 'ping_free', {})).json().code).toBe('account_suspended');
      expect(upstream.calls).toHaveLength(0);
    });

    it('a tool whose header variable is not set on this server: 503 unavailable', async () => {
      const { key } = await accountWithKey(h.services);
      const res = await call(key, 'needs_secret', {});
      expect(res.statusCode).toBe(503);
      expect(res.json().code).toBe('unavailable');
      expect(res.json().message).not.toContain('NOT_SET_ANYWHERE');
      expect(upstream.calls).toHaveLength(0);
    });

    it('no key or a bad key: 401, and an unknown tool is still 404 unknown_tool', async () => {
      const res = await h.app.inject({ method: 'POST', url: '/api/v1/tools/search_people', payload: {} });
      expect(res.statusCode).toBe(401);
      const { key } = await accountWithKey(h.services);
      expect((await call(key, 'no_such_tool', {})).json().code).toBe('unknown_tool');
      expect(upstream.calls).toHaveLength(0);
    });
  });

  it('a free tool consumes and charges nothing, and reports the balance', async () => {
    const { key, accountId } = await accountWithKey(h.services, { tokens: 5 });
    const before = await account(accountId);
    const res = await call(key, 'ping_free', {});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      results: { pong: true },
      status: 'ok',
      metadata: { tokens_charged: 0, tokens_remaining: 5 },
    });
    expect(await account(accountId)).toEqual(before);
  });

  it('results go out as the upstream wrote them; an escaped key is still read as JSON.parse reads it', async () => {
    const { key } = await accountWithKey(h.services, { tokens: 5 });
    const written = '[ {"id": 12345678901234567890, "name": "\\u00e9\\"}"}, 1.50 ]';
    upstream.on('free', (_call, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"status" : "ok",\n "results": ${written}, "metadata": {"page": 1}}`);
    });
    const res = await call(key, 'ping_free', {});
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    // Written in as it came (the big integer keeps its digits), and the whole answer is JSON.
    expect(res.body).toBe(
      `{"results":${written},"status":"ok","metadata":{"page":1,"tokens_charged":0,"tokens_remaining":5}}`,
    );
    expect(res.json().results[0].name).toBe('é"}');

    // `res\u0075lts` is `results` to JSON.parse, and wins as the later key: the parsed value is sent.
    upstream.on('free', (_call, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"results":[1],"res\\u0075lts":[2]}');
    });
    const escaped = await call(key, 'ping_free', {});
    expect(escaped.json()).toEqual({
      results: [2],
      status: 'ok',
      metadata: { tokens_charged: 0, tokens_remaining: 5 },
    });
  });

  it('an unlimited account is never charged and reports -1', async () => {
    const { key } = await accountWithKey(h.services, { unlimited: true });
    const res = await call(key, 'search_people', { title: 'cto', limit: 2 });
    expect(res.json().metadata).toMatchObject({ tokens_charged: 0, tokens_remaining: -1 });
  });

  it('a tool removed or changed is served so at once by the server that changed it', async () => {
    const { key } = await accountWithKey(h.services, { tokens: 100 });
    expect((await call(key, 'ping_free', {})).statusCode).toBe(200);
    expect((await h.services.catalogue.remove('ping_free')).ok).toBe(true);
    expect((await call(key, 'ping_free', {})).json().code).toBe('unknown_tool');
    const put = await h.services.catalogue.put('ping_free', {
      upstream: { url: `${upstream.url}/free` },
      metering: { category: 'enrich', tokens_per_call: 4 },
    });
    expect(put.ok).toBe(true);
    expect((await call(key, 'ping_free', {})).json().metadata).toMatchObject({ tokens_charged: 4 });
  });

  it('/openapi.json lists every catalogue tool with its input schema', async () => {
    const doc = (await h.app.inject({ url: '/openapi.json' })).json();
    const search = doc.paths['/api/v1/tools/search_people'].post;
    expect(search.requestBody.content['application/json'].schema).toEqual(
      catalogue(upstream.url).tools[0]!.input_schema,
    );
    expect(doc.paths['/api/v1/tools/ping_free'].post.requestBody.content['application/json'].schema).toEqual({
      type: 'object',
    });
    expect(doc.paths['/api/v1/tools/get_account']).toBeDefined();
  });

  it('once a window is spent, the next call is refused without an upstream call', async () => {
    const accountId = await accountOnPlan(h.services, { records5h: 100, records1w: 100, requests5h: 100 });
    expect((await h.services.tokens.apply(accountId, { kind: 'grant', amount: 100 })).ok).toBe(true);
    const created = await h.services.keys.create(accountId, 'k');
    if (!created.ok) throw new Error('no key');
    // accountOnPlan gives search limits of 1: one request, then 429 without an upstream call.
    expect((await call(created.value.key, 'search_people', { title: 'cto', limit: 1 })).statusCode).toBe(200);
    const second = await call(created.value.key, 'search_people', { title: 'nobody' });
    expect(second.statusCode).toBe(429);
    expect(second.json()).toMatchObject({ code: 'fair_use_exceeded', window: 'search.requests.5h' });
    expect(upstream.calls).toHaveLength(1);
  });
});
