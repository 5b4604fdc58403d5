import { type AddressInfo, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { type GetAccountResponse, ToolgateClient, ToolgateError } from '../../src/client/index.js';
import type { GetAccountResponse as ServerGetAccountResponse } from '../../src/service/views.js';
import { bearer } from '../calls.js';
import { type AppHarness, accountWithKey, scratchApp } from '../helpers.js';

let h: AppHarness;
let baseUrl: string;
let key: string;
let accountId: string;

beforeAll(async () => {
  h = await scratchApp();
  ({ key, accountId } = await accountWithKey(h.services, { name: 'Client Co', tokens: 42 }));
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
});
afterAll(() => h.close());

/** A port nothing listens on: bound, then released. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

const rejection = async (p: Promise<unknown>): Promise<ToolgateError> => {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ToolgateError);
    return err as ToolgateError;
  }
  throw new Error('expected the call to fail');
};

describe('ToolgateClient', () => {
  it('has hand-written response types that match what the server answers', () => {
    expectTypeOf<GetAccountResponse>().toEqualTypeOf<ServerGetAccountResponse>();
  });

  it('gets the account that owns the key', async () => {
    const client = new ToolgateClient({ baseUrl: `${baseUrl}/`, apiKey: key });
    const answer = await client.getAccount();
    expect(answer.status).toBe('ok');
    expect(answer.results).toMatchObject({
      id: accountId,
      name: 'Client Co',
      status: 'active',
      plan: 'free',
      token_balance: 42,
      unlimited: false,
      api_key_count: 1,
      user_count: 0,
    });
    expect(answer.results.fair_use.search.requests['5h']).toEqual({
      limit: 250,
      used: 0,
      remaining: 250,
      resets_at: null,
    });
    expect(answer.metadata.fair_use.records_remaining_1w).toBe(500);
  });

  it('sends POST with a bearer key, a JSON content type and an empty object', async () => {
    const seen: Array<{ url: string; init: RequestInit }> = [];
    const client = new ToolgateClient({
      baseUrl,
      apiKey: key,
      fetch: async (url, init) => {
        seen.push({ url: String(url), init: init ?? {} });
        return fetch(url, init);
      },
    });
    await client.getAccount();
    expect(seen).toHaveLength(1);
    const { url, init } = seen[0]!;
    expect(url).toBe(`${baseUrl}/api/v1/tools/get_account`);
    expect(init.method).toBe('POST');
    expect(init.body).toBe('{}');
    const headers = new Headers(init.headers);
    expect(headers.get('authorization')).toBe(bearer(key));
    expect(headers.get('content-type')).toBe('application/json');
  });

  it('throws a ToolgateError with status, code, message and request id for a 401', async () => {
    const client = new ToolgateClient({ baseUrl, apiKey: 'tg_AAAAAAAAAAA' });
    const err = await rejection(client.getAccount());
    expect(err.status).toBe(401);
    expect(err.code).toBe('invalid_api_key');
    expect(err.message).toBe('Invalid or missing API key.');
    expect(err.requestId).toMatch(/^req_/);
    expect(err.body).toMatchObject({ status: 'error', error: 'Unauthorized', code: 'invalid_api_key' });
  });

  it('calls other tools by name through callTool', async () => {
    const client = new ToolgateClient({ baseUrl, apiKey: key });
    const same = await client.callTool<GetAccountResponse>('get_account', {});
    expect(same.results.id).toBe(accountId);
    const unknown = await rejection(client.callTool('no_such_tool'));
    expect(unknown).toMatchObject({ status: 404, code: 'unknown_tool' });
    const badArgs = await rejection(client.callTool('get_account', { extra: 1 }));
    expect(badArgs).toMatchObject({ status: 400, code: 'invalid_arguments' });
  });

  it('turns a refused connection into network_error naming the URL', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}`;
    const err = await rejection(new ToolgateClient({ baseUrl: dead, apiKey: key }).getAccount());
    expect(err).toMatchObject({ status: 0, code: 'network_error', requestId: null });
    expect(err.message).toBe(`Could not reach ${dead}/api/v1/tools/get_account: ECONNREFUSED.`);
  });

  it('gives up after timeoutMs with network_error', async () => {
    const client = new ToolgateClient({
      baseUrl,
      apiKey: key,
      timeoutMs: 50,
      fetch: (_url, init) =>
        new Promise((_resolve, reject) => {
          init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
        }),
    });
    const err = await rejection(client.getAccount());
    expect(err.code).toBe('network_error');
    expect(err.message).toBe(`No answer from ${baseUrl}/api/v1/tools/get_account within 50 ms.`);
  });

  it('reports an error that is not toolgate-shaped as http_error', async () => {
    const client = new ToolgateClient({
      baseUrl,
      apiKey: key,
      fetch: async () => new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }),
    });
    const err = await rejection(client.getAccount());
    expect(err).toMatchObject({ status: 502, code: 'http_error', requestId: null });
  });

  it('rejects a base URL that is not an http(s) URL', () => {
    expect(() => new ToolgateClient({ baseUrl: 'localhost:8080', apiKey: key })).toThrow(/baseUrl/);
  });
});
