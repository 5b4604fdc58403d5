/** The admin API's tool catalogue and key verification: every route, its refusals, and its audit trail. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { send } from '../calls.js';
import { ADMIN_TOKEN, type AppHarness, accountWithKey, scratchApp } from '../helpers.js';

const tool = {
  description: 'Find people.',
  input_schema: { type: 'object', properties: { q: { type: 'string' } } },
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a catalogue placeholder, meant literally.
  upstream: { url: 'http://127.0.0.1:9/people?region=eu', headers: { 'X-Api-Key': '${PEOPLE_KEY}' } },
  metering: { category: 'search', tokens_per_record: 1 },
};

describe('admin API: tools and key verification', () => {
  let h: AppHarness;
  beforeEach(async () => {
    h = await scratchApp({ catalogue: { upstreamEnv: ['PEOPLE_KEY'] } });
  });
  afterEach(async () => h.close());

  // Always with the JSON content type, a body or not.
  const admin = (method: 'GET' | 'PUT' | 'DELETE' | 'POST', url: string, body?: unknown) =>
    send(h.app, ADMIN_TOKEN, method, `/admin/v1${url}`, body, {
      headers: { 'content-type': 'application/json' },
    });

  it('PUT creates (201), replaces (200) or leaves as is (200 unchanged), with every default shown', async () => {
    const created = await admin('PUT', '/tools/search_people', tool);
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({
      name: 'search_people',
      description: 'Find people.',
      input_schema: tool.input_schema,
      upstream: {
        url: tool.upstream.url,
        timeout_ms: 30_000,
        max_response_bytes: 10_485_760,
        headers: tool.upstream.headers,
      },
      metering: {
        category: 'search',
        records_pointer: '/results',
        expected_records_pointer: null,
        tokens_per_call: 0,
        tokens_per_record: 1,
      },
      created_at: '2026-04-15T13:55:29Z',
      updated_at: '2026-04-15T13:55:29Z',
      outcome: 'created',
    });
    expect((await admin('PUT', '/tools/search_people', tool)).json().outcome).toBe('unchanged');
    const replaced = await admin('PUT', '/tools/search_people', {
      ...tool,
      name: 'search_people',
      metering: null,
    });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json()).toMatchObject({ outcome: 'updated', metering: null });
  });

  it('GET lists by name and shows one; an unknown name is 404 not_found', async () => {
    await admin('PUT', '/tools/b_tool', tool);
    await admin('PUT', '/tools/a_tool', tool);
    const list = await admin('GET', '/tools');
    expect(list.json().data.map((t: { name: string }) => t.name)).toEqual(['a_tool', 'b_tool']);
    expect((await admin('GET', '/tools/a_tool')).json().name).toBe('a_tool');
    const missing = await admin('GET', '/tools/nope');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('not_found');
  });

  it('a bad definition is refused whole, with every problem and its member path', async () => {
    const res = await admin('PUT', '/tools/get_account', {
      name: 'other_name',
      upstream: { url: 'ftp://example.com', timeout_ms: 0, headers: { Host: 'x' } },
      metering: { category: 'Both!', tokens_per_call: -1 },
      color: 'blue',
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.code).toBe('invalid_arguments');
    const paths = (body.problems as { path: string; reason: string }[]).map((p) => p.path);
    for (const path of [
      '/name',
      '/upstream/url',
      '/upstream/timeout_ms',
      '/upstream/headers/Host',
      '/metering/category',
      '/metering/tokens_per_call',
      '/color',
    ]) {
      expect(paths).toContain(path);
    }
    expect(body.message).toMatch(/problems; nothing was changed\.$/);
    expect((await admin('GET', '/tools')).json().data).toEqual([]);
  });

  it('DELETE removes a tool once; again it is 404', async () => {
    await admin('PUT', '/tools/search_people', tool);
    const removed = await admin('DELETE', '/tools/search_people');
    expect(removed.statusCode).toBe(200);
    expect(removed.json().name).toBe('search_people');
    expect((await admin('DELETE', '/tools/search_people')).statusCode).toBe(404);
  });

  it('changes are audited with the upstream and header names, never header values', async () => {
    await admin('PUT', '/tools/search_people', {
      ...tool,
      upstream: {
        url: 'http://127.0.0.1:9/people?key=literal-secret',
        headers: { 'X-Api-Key': 'also-secret' },
      },
    });
    await admin('DELETE', '/tools/search_people');
    const trail = (await admin('GET', '/audit')).json().data;
    expect(trail.map((e: { action: string }) => e.action)).toEqual(['tool.put', 'tool.remove']);
    expect(trail[0]).toMatchObject({
      actor: 'admin:admin',
      target_id: 'search_people',
      details: { upstream: 'http://127.0.0.1:9/people', header_names: ['X-Api-Key'] },
    });
    expect(JSON.stringify(trail)).not.toMatch(/secret/);
  });

  it('an API key never opens the tool routes', async () => {
    const { key } = await accountWithKey(h.services);
    const res = await send(h.app, key, 'GET', '/admin/v1/tools');
    expect(res.statusCode).toBe(401);
  });

  describe('POST /admin/v1/keys/verify', () => {
    it('a valid key: whose it is, its account status and plan', async () => {
      const { key, keyId, accountId } = await accountWithKey(h.services, { plan: 'subscription_27' });
      const res = await admin('POST', '/keys/verify', { key });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        valid: true,
        account_id: accountId,
        key_id: keyId,
        account_status: 'active',
        plan: 'subscription_27',
      });
      await h.services.accounts.update(accountId, { status: 'suspended' });
      expect((await admin('POST', '/keys/verify', { key })).json().account_status).toBe('suspended');
    });

    it('malformed, unknown and revoked keys get one answer', async () => {
      const { key, keyId } = await accountWithKey(h.services);
      await h.services.keys.revoke(keyId);
      const invalid = { valid: false, code: 'invalid_api_key' };
      for (const presented of [key, 'tg_AAAAAAAAAAA', 'not a key', '']) {
        const res = await admin('POST', '/keys/verify', { key: presented });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual(invalid);
      }
    });

    it('a body without a key string is 400', async () => {
      expect((await admin('POST', '/keys/verify', {})).statusCode).toBe(400);
      expect((await admin('POST', '/keys/verify', { key: 5 })).statusCode).toBe(400);
    });
  });
});
