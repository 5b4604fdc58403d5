/**
 * The hot path against the SDK: the same MCP requests sent over real sockets to two apps on one
 * store, one answering hot messages itself and one leaving every message to the SDK, must get the
 * same status, media type and bytes (request ids aside), in both protocol eras and for every shape
 * the hot path takes or leaves. When the SDK changes what it writes, this fails.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  createMcpHandler,
  isSpecType,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  Server,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { hotMessage, LEGACY_VERSIONS, META_KEYS, MODERN_VERSION } from '../../src/mcp/hot-messages.js';
import { bearer } from '../calls.js';
import { ADMIN_TOKEN, type AppHarness, accountWithKey, scratchApp } from '../helpers.js';
import { generatedCase } from './generated-messages.js';

const BOTH = 'application/json, text/event-stream';
const MODERN = MODERN_VERSION;
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'diff', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

interface Case {
  name: string;
  body: unknown;
  headers?: Record<string, string>;
}

const legacy = (name: string, method: string, params?: unknown, id: unknown = 1, headers = {}): Case => ({
  name: `2025: ${name}`,
  body: { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) },
  headers: { 'mcp-protocol-version': '2025-06-18', ...headers },
});

const modern = (name: string, method: string, params: Record<string, unknown> = {}, headers = {}): Case => ({
  name: `2026: ${name}`,
  body: { jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: ENVELOPE } },
  headers: {
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
    ...headers,
  },
});

const CASES: Case[] = [
  legacy('initialize 2025-06-18', 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'diff', version: '1' },
  }),
  legacy('initialize 2024-11-05, no header', 'initialize', {
    protocolVersion: '2024-11-05',
    capabilities: {},
    clientInfo: { name: 'diff', version: '1' },
  }),
  legacy('initialize of an unknown revision', 'initialize', {
    protocolVersion: '1999-01-01',
    capabilities: {},
    clientInfo: { name: 'diff', version: '1' },
  }),
  legacy('initialize without clientInfo', 'initialize', { protocolVersion: '2025-06-18', capabilities: {} }),
  legacy('ping', 'ping'),
  legacy('ping with params', 'ping', {}, 'p-1'),
  legacy('tools/list', 'tools/list', {}, 0),
  legacy('tools/list with a cursor', 'tools/list', { cursor: 'x' }),
  legacy('get_account', 'tools/call', { name: 'get_account', arguments: {} }),
  legacy('get_account, id "1"', 'tools/call', { name: 'get_account', arguments: {} }, '1'),
  legacy('get_account, id 0', 'tools/call', { name: 'get_account', arguments: {} }, 0),
  legacy('get_account, no arguments', 'tools/call', { name: 'get_account' }),
  legacy('get_account, an unknown argument', 'tools/call', { name: 'get_account', arguments: { x: 1 } }),
  legacy('get_billing', 'tools/call', { name: 'get_billing', arguments: {} }),
  legacy('get_usage week', 'tools/call', { name: 'get_usage', arguments: { period: 'week' } }),
  legacy('get_usage, a bad period', 'tools/call', { name: 'get_usage', arguments: { period: 'x' } }),
  legacy('an unknown tool', 'tools/call', { name: 'nope', arguments: {} }),
  legacy('no tool name', 'tools/call', { arguments: {} }),
  legacy('arguments not an object', 'tools/call', { name: 'get_account', arguments: [1] }),
  legacy('a progress token', 'tools/call', {
    name: 'get_account',
    arguments: {},
    _meta: { progressToken: 5 },
  }),
  legacy('an id of null', 'tools/call', { name: 'get_account', arguments: {} }, null),
  legacy('a fractional id', 'tools/call', { name: 'get_account', arguments: {} }, 1.5),
  legacy('a negative id', 'tools/call', { name: 'get_account', arguments: {} }, -3),
  legacy('no protocol header', 'tools/call', { name: 'get_account', arguments: {} }, 1, {
    'mcp-protocol-version': undefined,
  }),
  legacy('an unsupported protocol header', 'tools/call', { name: 'get_account', arguments: {} }, 1, {
    'mcp-protocol-version': '2099-01-01',
  }),
  legacy('Accept without event streams', 'tools/call', { name: 'get_account', arguments: {} }, 1, {
    accept: 'application/json',
  }),
  legacy('a session id', 'tools/list', {}, 1, { 'mcp-session-id': 'abc' }),
  legacy('an unknown method', 'resources/list', {}),
  legacy('a tool name that is no string', 'tools/call', { name: 5, arguments: {} }),
  legacy('arguments as a string', 'tools/call', { name: 'get_account', arguments: 'x' }),
  legacy('a task', 'tools/call', { name: 'get_account', arguments: {}, task: { ttl: 1000 } }),
  legacy('_meta as a string', 'tools/list', { _meta: 'x' }),
  legacy('an id of true', 'ping', {}, true),
  legacy('initialize without capabilities', 'initialize', {
    protocolVersion: '2025-06-18',
    clientInfo: { name: 'diff', version: '1' },
  }),
  legacy('initialize with a clientInfo lacking its version', 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'diff' },
  }),
  {
    name: '2025: notifications/initialized',
    body: { jsonrpc: '2.0', method: 'notifications/initialized' },
    headers: { 'mcp-protocol-version': '2025-06-18' },
  },
  {
    name: '2025: notifications/initialized with an id',
    body: { jsonrpc: '2.0', id: 4, method: 'notifications/initialized' },
    headers: { 'mcp-protocol-version': '2025-06-18' },
  },
  modern('server/discover', 'server/discover'),
  modern('server/discover, id a string', 'server/discover', {}, {}),
  modern('ping (not in this era)', 'ping'),
  modern('tools/list', 'tools/list'),
  modern('get_account', 'tools/call', { name: 'get_account', arguments: {} }),
  modern('get_usage, a bad period', 'tools/call', { name: 'get_usage', arguments: { period: 'x' } }),
  modern('an unknown tool', 'tools/call', { name: 'nope', arguments: {} }),
  modern('Mcp-Name not the tool', 'tools/call', { name: 'get_account', arguments: {} }, { 'mcp-name': 'x' }),
  modern('Mcp-Method not the method', 'tools/list', {}, { 'mcp-method': 'ping' }),
  modern('a 2025 protocol header', 'tools/list', {}, { 'mcp-protocol-version': '2025-06-18' }),
  modern('no Mcp-Method', 'ping', {}, { 'mcp-method': undefined }),
  {
    name: '2026: an envelope without clientInfo',
    body: {
      jsonrpc: '2.0',
      id: 8,
      method: 'ping',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } },
    },
    headers: { 'mcp-protocol-version': MODERN, 'mcp-method': 'ping' },
  },
  {
    name: '2026: a revision the server does not speak',
    body: {
      jsonrpc: '2.0',
      id: 9,
      method: 'ping',
      params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
    },
    headers: { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'ping' },
  },
];

describe('MCP hot path and SDK answer alike', () => {
  let h: AppHarness;
  let sdkOnly: FastifyInstance;
  let fastUrl: string;
  let sdkUrl: string;
  // One account a side, made alike: each sees only its own side's calls in its usage.
  const keys = new Map<string, string>();

  beforeAll(async () => {
    h = await scratchApp({ catalogue: {} });
    sdkOnly = await buildApp({
      services: h.services,
      adminToken: ADMIN_TOKEN,
      ...(h.catalogue ? { catalogue: h.catalogue } : {}),
      mcpFastPath: false,
    });
    fastUrl = await h.app.listen({ host: '127.0.0.1', port: 0 });
    sdkUrl = await sdkOnly.listen({ host: '127.0.0.1', port: 0 });
    keys.set(fastUrl, (await accountWithKey(h.services)).key);
    keys.set(sdkUrl, (await accountWithKey(h.services)).key);
  });
  afterAll(async () => {
    await sdkOnly?.close();
    await h?.close();
  });

  async function post(url: string, c: Case) {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: BOTH,
      authorization: bearer(keys.get(url)),
    };
    for (const [name, value] of Object.entries(c.headers ?? {})) {
      if (value === undefined) delete headers[name];
      else headers[name] = value;
    }
    const res = await fetch(`${url}/mcp`, { method: 'POST', headers, body: JSON.stringify(c.body) });
    const text = await res.text();
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      // Each request has its own id, in error bodies too; each side its own account.
      body: text.replace(/req_[0-9a-z]{26}/g, 'req_…').replace(/acc_[0-9a-z]{26}/g, 'acc_…'),
    };
  }

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const sdk = await post(sdkUrl, c);
    const fast = await post(fastUrl, c);
    expect(fast).toEqual(sdk);
  });

  it('of 300 generated messages of both eras, each is answered alike', { timeout: 120_000 }, async () => {
    // What the hot path took, by era and method: the run must reach the hot answers of both eras.
    const taken = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(generatedCase, async (c) => {
        const hot = hotMessage(c.body, { accept: BOTH, ...c.headers });
        if (hot) taken.set(`${hot.era} ${hot.method}`, (taken.get(`${hot.era} ${hot.method}`) ?? 0) + 1);
        const sdk = await post(sdkUrl, c);
        const fast = await post(fastUrl, c);
        expect(fast, JSON.stringify(c)).toEqual(sdk);
      }),
      { numRuns: 300, seed: 42 },
    );
    for (const kind of [
      'legacy initialize',
      'legacy tools/call',
      'legacy tools/list',
      'legacy notifications/initialized',
      'modern server/discover',
      'modern tools/call',
      'modern tools/list',
    ]) {
      expect(taken.get(kind) ?? 0, kind).toBeGreaterThanOrEqual(5);
    }
  });
});

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The SDK's schema for the request a hot method names. */
const SPEC: Record<string, (m: unknown) => boolean> = {
  'tools/call': isSpecType.CallToolRequest,
  'tools/list': isSpecType.ListToolsRequest,
  ping: isSpecType.PingRequest,
  initialize: isSpecType.InitializeRequest,
  'notifications/initialized': isSpecType.InitializedNotification,
  'server/discover': isSpecType.DiscoverRequest,
};

describe("the hot path's rules are the SDK's", () => {
  it('its protocol versions and envelope keys are those the SDK exports', () => {
    expect(LEGACY_VERSIONS).toEqual(SUPPORTED_PROTOCOL_VERSIONS);
    expect(META_KEYS).toEqual({
      protocolVersion: PROTOCOL_VERSION_META_KEY,
      clientInfo: CLIENT_INFO_META_KEY,
      clientCapabilities: CLIENT_CAPABILITIES_META_KEY,
      serverInfo: SERVER_INFO_META_KEY,
    });
  });

  it('its 2026 revision is the one modern revision the SDK serves', async () => {
    // The SDK keeps its list of modern revisions internal (no public constant yet, unlike
    // SUPPORTED_PROTOCOL_VERSIONS): a bare SDK handler's discovery answer and its refusal of a
    // revision it does not speak both name that list, so an SDK that changes it fails here.
    const handler = createMcpHandler(() => new Server({ name: 'bare', version: '1' }, { capabilities: {} }), {
      legacy: 'reject',
    });
    const ask = async (version: string) => {
      const body = {
        jsonrpc: '2.0',
        id: 1,
        method: 'server/discover',
        params: { _meta: { ...ENVELOPE, [PROTOCOL_VERSION_META_KEY]: version } },
      };
      const headers = {
        'content-type': 'application/json',
        accept: BOTH,
        'mcp-protocol-version': version,
        'mcp-method': 'server/discover',
      };
      const request = new Request('http://sdk.local/mcp', {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      });
      return (await (await handler.fetch(request, { parsedBody: body })).json()) as {
        result?: { supportedVersions?: unknown };
        error?: { data?: { supported?: unknown } };
      };
    };
    try {
      const discovered = await ask(MODERN_VERSION);
      expect(discovered.result?.supportedVersions).toEqual([MODERN_VERSION]);
      const refused = await ask('2099-01-01');
      expect(refused.error?.data?.supported).toEqual([MODERN_VERSION]);
    } finally {
      await handler.close();
    }
  });

  it('every message it takes, of the cases above, the SDK schema of its method takes too', () => {
    let taken = 0;
    for (const c of CASES) {
      const headers = { accept: BOTH, ...c.headers };
      const hot = hotMessage(c.body, headers);
      if (!hot) continue;
      taken++;
      expect(SPEC[hot.method]?.(c.body), c.name).toBe(true);
    }
    expect(taken).toBeGreaterThan(15);
  });

  it('of 10,000 generated messages of both eras, every one it takes the SDK schema takes too', () => {
    const value = fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 4 }),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.dictionary(
        fc.constantFrom('name', 'version', 'x'),
        fc.oneof(fc.string({ maxLength: 3 }), fc.integer()),
      ),
      fc.array(fc.integer(), { maxLength: 2 }),
    );
    const params = fc.record(
      {
        name: fc.oneof(fc.constantFrom('get_account', 'nope'), value),
        arguments: value,
        cursor: value,
        task: value,
        protocolVersion: fc.oneof(fc.constantFrom(...SUPPORTED_PROTOCOL_VERSIONS), value),
        capabilities: value,
        clientInfo: value,
        _meta: fc.oneof(value, fc.constant({ progressToken: 1 }), fc.constant(ENVELOPE)),
      },
      { requiredKeys: [] },
    );
    const message = fc.record(
      {
        jsonrpc: fc.constantFrom('2.0', '1.0'),
        id: value,
        method: fc.constantFrom(
          'tools/call',
          'tools/list',
          'ping',
          'initialize',
          'notifications/initialized',
          'server/discover',
        ),
        params: fc.oneof(params, value),
      },
      { requiredKeys: ['jsonrpc', 'method'] },
    );
    // Each message under the headers of either era: 2025's, or those the 2026 envelope goes with.
    const modernHeaders = (m: { method: string; params?: unknown }) => ({
      accept: BOTH,
      'mcp-protocol-version': MODERN,
      'mcp-method': m.method,
      ...(typeof (m.params as { name?: unknown } | undefined)?.name === 'string'
        ? { 'mcp-name': (m.params as { name: string }).name }
        : {}),
    });
    const taken = { legacy: 0, modern: 0 };
    fc.assert(
      fc.property(message, fc.constantFrom('2025', '2025', '2026', '2026 envelope'), (generated, era) => {
        // Half of the 2026 ones with the envelope put in, so that the hot path takes many of them.
        const m =
          era === '2026 envelope' && isObject(generated.params)
            ? { ...generated, params: { ...generated.params, _meta: ENVELOPE } }
            : generated;
        const headers =
          era === '2025' ? { accept: BOTH, 'mcp-protocol-version': '2025-06-18' } : modernHeaders(m);
        const hot = hotMessage(m, headers);
        if (!hot) return true;
        taken[hot.era]++;
        return SPEC[hot.method]?.(m) === true;
      }),
      { numRuns: 10_000, seed: 42 },
    );
    expect(taken.legacy).toBeGreaterThan(100);
    expect(taken.modern).toBeGreaterThan(20);
  });
});
