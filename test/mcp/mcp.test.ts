/**
 * The MCP front door, driven by the SDK's real clients of both lines over a real socket: the same
 * tools, answers, limits and balances as the HTTP route.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callTool } from '../calls.js';
import { type AppHarness, accountWithKey, scratchApp } from '../helpers.js';
import { sendJson, startTestUpstream, type TestUpstream } from '../upstream/test-upstream.js';
import { connect, LINES, type McpClient } from './clients.js';

let upstream: TestUpstream;
beforeAll(async () => {
  upstream = await startTestUpstream();
  upstream.on('search', (call, res) => {
    const { n } = call.body as { n: number };
    sendJson(res, 200, { results: Array.from({ length: n }, (_, i) => ({ i })), metadata: { source: 'up' } });
  });
});
afterAll(async () => upstream.close());

const SEARCH = {
  description: 'Search things.',
  input_schema: {
    type: 'object',
    properties: { n: { type: 'integer', minimum: 0, maximum: 40 } },
    required: ['n'],
    additionalProperties: false,
  },
  metering: { category: 'search', expected_records_pointer: '/n', tokens_per_record: 1 },
};

for (const line of LINES) {
  describe(`MCP with the ${line} client`, () => {
    let h: AppHarness;
    let url: string;
    let clients: McpClient[];
    beforeEach(async () => {
      h = await scratchApp({ catalogue: {} });
      const put = await h.services.catalogue.put('search_things', {
        ...SEARCH,
        upstream: { url: `${upstream.url}/search` },
      });
      expect(put.ok).toBe(true);
      url = await h.app.listen({ host: '127.0.0.1', port: 0 });
      clients = [];
    });
    afterEach(async () => {
      for (const c of clients) await c.close();
      await h.close();
    });
    const open = async (key: string) => {
      const c = await connect(line, url, key);
      clients.push(c);
      return c;
    };
    const http = (key: string, tool: string, body: unknown) => callTool(h.app, key, tool, body);

    it('speaks the revision of its line', async () => {
      const { key } = await accountWithKey(h.services);
      const c = await open(key);
      if (line === 'v2') expect(c.protocolVersion).toBe('2026-07-28');
      else expect(c.protocolVersion).toMatch(/^2025-/);
    });

    it('lists every tool with its description and input schema; a catalogue change shows on the next list', async () => {
      const { key } = await accountWithKey(h.services);
      const c = await open(key);
      const tools = await c.listTools();
      expect(tools.map((t) => t.name)).toEqual(['get_account', 'get_billing', 'get_usage', 'search_things']);
      expect(tools[3]).toMatchObject({ description: 'Search things.', inputSchema: SEARCH.input_schema });
      expect(tools[0]?.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
      await h.services.catalogue.put('ping_free', { upstream: { url: `${upstream.url}/search` } });
      expect((await c.listTools()).map((t) => t.name)).toEqual([
        'get_account',
        'get_billing',
        'get_usage',
        'ping_free',
        'search_things',
      ]);
    });

    it('get_account: structuredContent is the HTTP answer, and the text its JSON', async () => {
      const { key } = await accountWithKey(h.services, { tokens: 42 });
      const c = await open(key);
      const result = await c.callTool('get_account', {});
      const overHttp = (await http(key, 'get_account', {})).json();
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual(overHttp);
      expect(JSON.parse(result.content[0]?.text ?? '')).toEqual(overHttp);
    });

    it('a metered catalogue tool moves windows and balance exactly as over HTTP', async () => {
      const a = await accountWithKey(h.services, { tokens: 100 });
      const b = await accountWithKey(h.services, { tokens: 100 });
      const c = await open(a.key);
      const overMcp = await c.callTool('search_things', { n: 4 });
      const overHttp = (await http(b.key, 'search_things', { n: 4 })).json();
      expect(overMcp.isError).toBeFalsy();
      expect(overMcp.structuredContent).toEqual(overHttp);
      const [sa, sb] = [
        await h.services.accounts.get(a.accountId),
        await h.services.accounts.get(b.accountId),
      ];
      if (!sa.ok || !sb.ok) throw new Error('no account');
      expect(sa.value.fair_use).toEqual(sb.value.fair_use);
      expect(sa.value.token_balance).toBe(96);
      expect(sb.value.token_balance).toBe(96);
    });

    it('a refusal is a tool result with isError and the HTTP error body: fair use exhausted', async () => {
      const { key } = await accountWithKey(h.services, { tokens: 1000 });
      const c = await open(key);
      // The free plan allows 50 search records per 5h.
      expect((await c.callTool('search_things', { n: 40 })).isError).toBeFalsy();
      const refused = await c.callTool('search_things', { n: 20 });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({
        status: 'error',
        error: 'Too Many Requests',
        code: 'fair_use_exceeded',
        window: 'search.records.5h',
      });
      expect(JSON.parse(refused.content[0]?.text ?? '')).toEqual(refused.structuredContent);
    });

    it('arguments that fail the schema, and too few tokens: isError with the same codes as HTTP', async () => {
      const { key } = await accountWithKey(h.services, { tokens: 2 });
      const c = await open(key);
      const bad = await c.callTool('search_things', { n: 'four' });
      expect(bad.structuredContent).toMatchObject({ code: 'invalid_arguments' });
      const poor = await c.callTool('search_things', { n: 3 });
      expect(poor.structuredContent).toMatchObject({ code: 'insufficient_tokens' });
      const extra = await c.callTool('get_account', { verbose: true });
      expect(extra.structuredContent).toMatchObject({
        code: 'invalid_arguments',
        message: 'Unknown argument "verbose".',
      });
    });

    it('a suspended account lists tools and calls get_account; a metered tool is refused 403', async () => {
      const { key, accountId } = await accountWithKey(h.services, { tokens: 100 });
      await h.services.accounts.update(accountId, { status: 'suspended' });
      const c = await open(key);
      expect((await c.listTools()).length).toBe(4);
      const account = await c.callTool('get_account', {});
      expect(account.structuredContent).toMatchObject({ results: { status: 'suspended' } });
      const refused = await c.callTool('search_things', { n: 1 });
      expect(refused).toMatchObject({ isError: true, structuredContent: { code: 'account_suspended' } });
    });

    it('an unknown tool is JSON-RPC error -32602', async () => {
      const { key } = await accountWithKey(h.services);
      const c = await open(key);
      await expect(c.callTool('no_such_tool', {})).rejects.toMatchObject({ code: -32602 });
    });

    it('a missing or invalid key cannot connect', async () => {
      await expect(open('tg_AAAAAAAAAAA')).rejects.toThrow();
      const { key, keyId } = await accountWithKey(h.services);
      await h.services.keys.revoke(keyId);
      await expect(open(key)).rejects.toThrow();
    });
  });
}
