/**
 * /mcp at the HTTP level, with raw requests: authentication before any MCP work, methods, malformed
 * and oversized bodies, batches, and one rate-limit budget per key shared with the HTTP route.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearer, callTool } from '../calls.js';
import { type AppHarness, accountWithKey, scratchApp } from '../helpers.js';
import { connect } from './clients.js';

const LEGACY_VERSION = '2025-06-18';
const ACCEPT = 'application/json, text/event-stream';

describe('/mcp over raw HTTP', () => {
  let h: AppHarness;
  let url: string;
  beforeEach(async () => {
    h = await scratchApp({ catalogue: {}, perKeyPerSecond: 4 });
    url = await h.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterEach(async () => h.close());

  const post = (key: string | undefined, body: string, headers: Record<string, string> = {}) =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: ACCEPT,
        'mcp-protocol-version': LEGACY_VERSION,
        ...(key ? { authorization: bearer(key) } : {}),
        ...headers,
      },
      body,
    });
  const rpc = (method: string, params: unknown = {}, id: number | string = 1) =>
    JSON.stringify({ jsonrpc: '2.0', id, method, params });

  it('a missing or invalid key is 401 with WWW-Authenticate: Bearer, before any MCP work', async () => {
    for (const key of [undefined, 'tg_AAAAAAAAAAA', 'garbage']) {
      const res = await post(key, rpc('tools/list'));
      expect(res.status).toBe(401);
      // RFC 6750: an error parameter only when a credential was presented.
      expect(res.headers.get('www-authenticate')).toBe(
        key === undefined ? 'Bearer' : 'Bearer error="invalid_token"',
      );
      expect(await res.json()).toMatchObject({ status: 'error', code: expect.stringMatching(/_api_key$/) });
    }
  });

  it('GET and DELETE are 405 with Allow: POST (stateless: no session to stream from or end)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${url}/mcp`, { method, headers: { accept: ACCEPT } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('tools/list answers JSON, not a stream', async () => {
    const { key } = await accountWithKey(h.services);
    const res = await post(key, rpc('tools/list'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await res.json()) as any).result.tools.map((t: { name: string }) => t.name)).toEqual([
      'get_account',
      'get_billing',
      'get_usage',
    ]);
  });

  it('malformed JSON is 400 invalid_json; malformed JSON-RPC a JSON-RPC error; neither a 5xx', async () => {
    const { key } = await accountWithKey(h.services);
    const notJson = await post(key, '{"jsonrpc": "2.0",');
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as any).code).toBe('invalid_json');
    for (const body of [
      '{}',
      '{"jsonrpc":"2.0"}',
      '{"jsonrpc":"1.0","id":1,"method":"tools/list"}',
      '{"jsonrpc":"2.0","id":{},"method":"tools/list"}',
      '"tools/list"',
      '[]',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"get_account"}',
    ]) {
      const res = await post(key, body);
      expect(res.status, body).toBeGreaterThanOrEqual(200);
      expect(res.status, body).toBeLessThan(500);
    }
  });

  it('a batch is answered without a 5xx', async () => {
    const { key } = await accountWithKey(h.services);
    const res = await post(key, `[${rpc('tools/list', {}, 1)},${rpc('tools/list', {}, 2)}]`);
    expect(res.status).toBeLessThan(500);
  });

  it('a body over the limit is 413 payload_too_large', async () => {
    const { key } = await accountWithKey(h.services);
    const huge = rpc('tools/call', { name: 'get_account', arguments: { pad: 'x'.repeat(100_000) } });
    const res = await post(key, huge);
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).code).toBe('payload_too_large');
  });

  it('another media type is 415', async () => {
    const { key } = await accountWithKey(h.services);
    const res = await post(key, rpc('tools/list'), { 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
  });

  it('one rate-limit budget per key, whichever door: a call over the limit is an isError rate_limited result', async () => {
    const { key } = await accountWithKey(h.services);
    // 4 per second on a clock that does not move: three over HTTP, then the v2 client's discovery.
    for (let i = 0; i < 3; i++) {
      const res = await callTool(h.app, key, 'get_account');
      expect(res.statusCode).toBe(200);
    }
    const client = await connect('v2', url, key);
    try {
      const refused = await client.callTool('get_account', {});
      expect(refused).toMatchObject({ isError: true, structuredContent: { code: 'rate_limited' } });
      const listed = await post(key, rpc('tools/list'));
      expect(listed.status).toBe(429);
      expect(listed.headers.get('retry-after')).toBe('1');
      const overHttp = await callTool(h.app, key, 'get_account');
      expect(overHttp.statusCode).toBe(429);
    } finally {
      await client.close();
    }
  });
});
