/**
 * Generated hostile input for `/mcp` (fast-check arbitraries), and what every answer to it holds.
 *
 * As in hostile-input.ts, a case is a small printable descriptor turned into bytes only when it
 * runs: JSON-RPC messages are generated as values (`{kind:'rpc', message}`), a tools/call whose
 * arguments are 40,000 levels deep is `{kind:'call-args', inner:{kind:'deep', ...}}`, and the real
 * keys are placeholders (`{{KEY}}`). The same seed gives the same descriptors on every run.
 */
import fc from 'fast-check';
import { type Answer, assertNoSecrets, checkErrorShape, describe } from './hostile-checks.js';
import {
  type BodySpec,
  bodyArb,
  type Cred,
  contentTypeArb,
  credArb,
  extraHeadersArb,
  type Materialized,
  materialize,
  materializeBody,
  type Secrets,
} from './hostile-input.js';

// ---------------------------------------------------------------------------------------------
// Headers

export const LEGACY_VERSIONS = ['2025-06-18', '2025-03-26', '2024-11-05'] as const;
export const MODERN_VERSION = '2026-07-28';

/** Protocol versions, right and wrong: for the header, `initialize` and the `_meta` envelope. */
const versionArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(MODERN_VERSION, ...LEGACY_VERSIONS) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      '2026-07-29',
      '2099-01-01',
      '1970-01-01',
      '2025-13-45',
      'latest',
      '2026-07-28 ',
      ' 2025-06-18',
      '2025-06-18,2026-07-28',
      'DRAFT-2026-v1',
      '__proto__',
      'x'.repeat(5_000),
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, 20260728, true, [], {}, ['2026-07-28']) },
);

/**
 * A value for one of the standard request headers (`MCP-Protocol-Version`, `Mcp-Method`,
 * `Mcp-Name`): 'match' is what the body says (its envelope's version, its method, its tool name),
 * undefined leaves the header out, anything else is sent as is.
 */
export type HeaderChoice = 'match' | string | undefined;

const versionHeaderArb: fc.Arbitrary<HeaderChoice> = fc.oneof(
  { weight: 5, arbitrary: fc.constant('match') },
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: versionArb.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))) },
);

const methodHeaderArb: fc.Arbitrary<HeaderChoice> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('match') },
  { weight: 2, arbitrary: fc.constant(undefined) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'tools/list',
      'tools/call',
      'ping',
      'initialize',
      'TOOLS/LIST',
      '',
      'x',
      '__proto__',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);

const nameHeaderArb: fc.Arbitrary<HeaderChoice> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('match') },
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constantFrom('get_account', 'GET_ACCOUNT', 'nope', '', '__proto__') },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);

const acceptArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json, text/event-stream') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      undefined,
      'application/json',
      'text/event-stream',
      'text/event-stream, application/json',
      '*/*',
      'application/*, text/*',
      'application/json;q=0, text/event-stream;q=0',
      'text/html',
      'application/xml',
      '',
      ',',
      'application/json, text/event-stream, */*;q=0.1',
      'APPLICATION/JSON, TEXT/EVENT-STREAM',
      'application/jsonx, text/event-streamx',
      '__proto__',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
);

/** Mostly the right media type; the hostile ones from hostile-input.ts (415s, odd parameters) now and then. */
const mcpContentTypeArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: contentTypeArb },
);

// ---------------------------------------------------------------------------------------------
// JSON-RPC messages

/** Odd JSON values where the protocol expects something specific. */
const oddValueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -1e308, '', ' ', '{}', [], {}, [[]], { a: {} }),
  fc.jsonValue({ maxDepth: 2 }),
);

const idArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 1_000 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      null,
      -1,
      0.5,
      -0,
      2 ** 53,
      2 ** 53 + 2,
      1e21,
      1e308,
      -1e308,
      Number.MAX_SAFE_INTEGER,
      '',
      '__proto__',
      'constructor',
      'x'.repeat(2_000),
      {},
      { id: 1 },
      [],
      [1],
      true,
      false,
    ),
  },
);

/** What `jsonrpc` says (undefined: the member is left out). */
const jsonrpcArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 16, arbitrary: fc.constant('2.0') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(undefined, '1.0', '2', 2, 2.0, '2.0 ', ' 2.0', '3.0', '', null, {}),
  },
);

const toolNameArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('get_account') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'GET_ACCOUNT',
      'get_account ',
      ' get_account',
      'get-account',
      'get_account\u0000',
      'get_accounts',
      'nope',
      'search',
      'enrich',
      '',
      '__proto__',
      'constructor',
      'hasOwnProperty',
      'toString',
      '../get_account',
      'get_account/../get_account',
      'x'.repeat(10_000),
      '😀',
      '\ud800',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: oddValueArb },
);

/** Deeply nested JSON-ish values, built as values (so the message is still valid JSON). */
const deepValueArb: fc.Arbitrary<unknown> = fc
  .tuple(fc.integer({ min: 1, max: 300 }), fc.constantFrom('object', 'array', '__proto__'))
  .map(([depth, how]) => {
    let v: unknown = 1;
    for (let i = 0; i < depth; i++) {
      if (how === 'array') v = [v];
      else if (how === 'object') v = { a: v };
      // Defined, not assigned: an own member named `__proto__`, as JSON.parse makes it.
      else v = Object.defineProperty({}, '__proto__', { value: v, enumerable: true });
    }
    return v;
  });

const argumentsArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: fc.constant({}) },
  { weight: 2, arbitrary: fc.constant(undefined) },
  {
    weight: 3,
    arbitrary: fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      { __proto__: null, polluted: true },
      JSON.parse('{"__proto__":{"polluted":true}}'),
      JSON.parse('{"constructor":{"prototype":{"polluted":true}}}'),
      { account_id: '{{ACCOUNT}}' },
      { key: '{{KEY}}' },
      { pad: 'x'.repeat(20_000) },
    ),
  },
  { weight: 2, arbitrary: oddValueArb },
  { weight: 1, arbitrary: deepValueArb },
);

const clientInfoArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ name: 'fuzz', version: '1.0.0' }) },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: oddValueArb },
  { weight: 1, arbitrary: fc.record({ name: oddValueArb, version: oddValueArb }) },
);

const capabilitiesArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.constant({ sampling: {}, roots: { listChanged: true }, elicitation: {} }) },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: oddValueArb },
);

/** The 2026-07-28 per-request envelope: absent, right, or wrong in one or more members. */
const metaArb: fc.Arbitrary<Record<string, unknown> | undefined> = fc.oneof(
  { weight: 5, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.constant(modernRequest('ping').params._meta) },
  {
    weight: 6,
    arbitrary: fc
      .record(
        {
          version: versionArb,
          capabilities: capabilitiesArb,
          info: clientInfoArb,
          progressToken: fc.oneof(
            { weight: 4, arbitrary: fc.constant(undefined) },
            { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), oddValueArb) },
          ),
          logLevel: fc.oneof(
            { weight: 4, arbitrary: fc.constant(undefined) },
            { weight: 1, arbitrary: fc.constantFrom('debug', 'error', 'nonsense', 3, null) },
          ),
        },
        { requiredKeys: ['version'] },
      )
      .map((m) => {
        const meta: Record<string, unknown> = { 'io.modelcontextprotocol/protocolVersion': m.version };
        if (m.capabilities !== undefined) meta['io.modelcontextprotocol/clientCapabilities'] = m.capabilities;
        if (m.info !== undefined) meta['io.modelcontextprotocol/clientInfo'] = m.info;
        if (m.progressToken !== undefined) meta.progressToken = m.progressToken;
        if (m.logLevel !== undefined) meta['io.modelcontextprotocol/logLevel'] = m.logLevel;
        return meta;
      }),
  },
  { weight: 1, arbitrary: oddValueArb as fc.Arbitrary<Record<string, unknown>> },
);

const METHODS = [
  'initialize',
  'tools/list',
  'tools/call',
  'server/discover',
  'ping',
  'notifications/initialized',
] as const;

const otherMethodArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    'notifications/cancelled',
    'notifications/progress',
    'notifications/roots/list_changed',
    'resources/list',
    'resources/read',
    'prompts/list',
    'prompts/get',
    'completion/complete',
    'logging/setLevel',
    'sampling/createMessage',
    'tasks/list',
    'subscriptions/listen',
    'rpc.discover',
    'TOOLS/LIST',
    'tools/list ',
    'tools/',
    '',
    '__proto__',
    'constructor',
    'toString',
  ),
  fc.string({ maxLength: 30 }),
  oddValueArb,
);

/** `params` for one method, plausible most of the time. */
function paramsFor(method: unknown): fc.Arbitrary<unknown> {
  const plausible: fc.Arbitrary<unknown> =
    method === 'initialize'
      ? fc
          .record({ protocolVersion: versionArb, capabilities: capabilitiesArb, clientInfo: clientInfoArb })
          .map((p) => JSON.parse(JSON.stringify(p)) as unknown)
      : method === 'tools/call'
        ? fc
            .record({ name: toolNameArb, arguments: argumentsArb })
            .map((p) => (p.arguments === undefined ? { name: p.name } : p))
        : method === 'tools/list'
          ? fc.constantFrom({}, { cursor: 'x' }, { cursor: 1 }, { cursor: null })
          : fc.constant({});
  return fc.oneof(
    { weight: 10, arbitrary: plausible },
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: oddValueArb },
  );
}

/** One JSON-RPC message, right or wrong in any member; undefined members are left out. */
export const messageArb: fc.Arbitrary<unknown> = fc
  .tuple(
    fc.oneof(
      { weight: 12, arbitrary: fc.constantFrom(...METHODS) },
      { weight: 2, arbitrary: otherMethodArb },
    ),
    jsonrpcArb,
    fc.oneof(
      { weight: 12, arbitrary: idArb.map((id) => ({ id })) },
      { weight: 1, arbitrary: fc.constant({}) },
    ),
  )
  .chain(([method, jsonrpc, id]) =>
    fc.tuple(paramsFor(method), metaArb).map(([params, meta]) => {
      const isNotification = typeof method === 'string' && method.startsWith('notifications/');
      const message: Record<string, unknown> = {};
      if (jsonrpc !== undefined) message.jsonrpc = jsonrpc;
      // A notification has no id, most of the time.
      if (!isNotification || 'id' in id) Object.assign(message, isNotification ? {} : id);
      message.method = method;
      let p = params;
      if (meta !== undefined) {
        p =
          p !== null && typeof p === 'object' && !Array.isArray(p)
            ? { ...(p as Record<string, unknown>), _meta: meta }
            : { _meta: meta };
      }
      if (p !== undefined) message.params = p;
      return message;
    }),
  );

/** The standard request headers a valid 2026-07-28 request carries along with its body. */
export function modernHeaders(method: string, name?: string): Record<string, string> {
  return {
    'mcp-protocol-version': MODERN_VERSION,
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
  };
}

/** A complete, valid 2026-07-28 request for `method` (send it with `modernHeaders`). */
export function modernRequest(method: string, params: Record<string, unknown> = {}, id: unknown = 1) {
  return {
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'fuzz', version: '1.0.0' },
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Bodies

/** A /mcp body: a JSON-RPC value as JSON, a tools/call around a hostile `arguments` text, or any hostile body. */
export type McpBody =
  | BodySpec
  | { kind: 'rpc'; message: unknown }
  | { kind: 'call-args'; id: number; inner: BodySpec };

export function materializeMcpBody(spec: McpBody): string | Buffer | undefined {
  switch (spec.kind) {
    case 'rpc':
      return JSON.stringify(spec.message) ?? 'null';
    case 'call-args': {
      const inner = materializeBody(spec.inner);
      const args = inner === undefined ? '' : typeof inner === 'string' ? inner : inner.toString('latin1');
      return `{"jsonrpc":"2.0","id":${spec.id},"method":"tools/call","params":{"name":"get_account","arguments":${args}}}`;
    }
    default:
      return materializeBody(spec);
  }
}

const rpc = (message: unknown): McpBody => ({ kind: 'rpc', message });

/** Hostile raw bodies from hostile-input.ts (deep, big, invalid UTF-8, BOMs, bytes...), never the plausible ones. */
const hostileBodyArb: fc.Arbitrary<BodySpec> = bodyArb('none', 0).filter((b) => b.kind !== 'none');

export const mcpBodyArb: fc.Arbitrary<McpBody> = fc.oneof(
  { weight: 30, arbitrary: messageArb.map(rpc) },
  // Batches, empty ones too: the 2025 revisions dropped them; nothing may break on them.
  {
    weight: 4,
    arbitrary: fc.array(messageArb, { maxLength: 5 }).map(rpc),
  },
  { weight: 1, arbitrary: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }).map(rpc) },
  // JSON that is not JSON-RPC.
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(rpc) },
  // Valid requests of either era, to make sure the real work is reached often.
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      rpc(modernRequest('tools/list')),
      rpc(modernRequest('tools/call', { name: 'get_account', arguments: {} })),
      rpc(modernRequest('tools/call', { name: 'get_account' })),
      rpc(modernRequest('server/discover')),
      rpc(modernRequest('ping')),
      rpc({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'fuzz', version: '1' },
        },
      }),
      rpc({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      rpc({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_account', arguments: {} } }),
      rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    ),
  },
  // tools/call with arguments deep, big, truncated or not JSON at all.
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.integer({ min: 0, max: 1_000 }),
        fc.oneof(
          hostileBodyArb.filter((b) => b.kind === 'deep' || b.kind === 'big' || b.kind === 'text'),
          fc
            .jsonValue({ maxDepth: 4 })
            .map((v): BodySpec => ({ kind: 'text', text: JSON.stringify(v) ?? '' })),
        ),
      )
      .map(([id, inner]): McpBody => ({ kind: 'call-args', id, inner })),
  },
  // Not JSON, too big, badly encoded, empty.
  { weight: 4, arbitrary: hostileBodyArb },
  { weight: 2, arbitrary: fc.constantFrom<McpBody>({ kind: 'none' }, { kind: 'text', text: '' }) },
);

// ---------------------------------------------------------------------------------------------
// Whole requests

/** One generated /mcp request, before its placeholders are resolved. */
export interface McpRequestSpec {
  method: string;
  url: string;
  cred: Cred;
  /** The Host header (undefined: the client's own). */
  host: string | undefined;
  accept: string | undefined;
  protocolVersion: HeaderChoice;
  mcpMethod: HeaderChoice;
  mcpName: HeaderChoice;
  contentType: string | undefined;
  extra: [string, string][];
  body: McpBody;
}

const ASIDE_METHODS = ['GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD'] as const;

/** Host headers a client can send that are no URL's host (spaces, `%`, brackets...), or odd ones that are. */
const hostArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 20, arbitrary: fc.constant(undefined) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'a b',
      '%',
      '%zz',
      'exa mple.com:80',
      'x/y',
      '[',
      '[::1]',
      '[::1]:80',
      'localhost:99999',
      'a:b:c',
      '@',
      'user@host',
      '#',
      '?',
      '\\',
      'ü',
      '',
      '127.0.0.1',
      'localhost',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);

/** Anything around the body may be wrong: method, path, credential, every header. */
const hostileRequestArb: fc.Arbitrary<McpRequestSpec> = fc.record({
  method: fc.oneof(
    { weight: 16, arbitrary: fc.constant('POST') },
    { weight: 3, arbitrary: fc.constantFrom(...ASIDE_METHODS) },
    { weight: 1, arbitrary: fc.constantFrom('post', 'get', 'delete', 'SEARCH', 'PROPFIND') },
  ),
  url: fc.oneof(
    { weight: 20, arbitrary: fc.constant('/mcp') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '/mcp/',
        '/mcp?x=1',
        '/mcp?__proto__[polluted]=1',
        '/MCP',
        '/mcp#x',
        '//mcp',
      ),
    },
  ),
  cred: credArb({ none: 2, key: 14, victim: 1, admin: 2, bad: 4, odd: 1 }),
  host: hostArb,
  accept: acceptArb,
  protocolVersion: versionHeaderArb,
  mcpMethod: methodHeaderArb,
  mcpName: nameHeaderArb,
  contentType: mcpContentTypeArb,
  extra: fc.oneof(
    { weight: 6, arbitrary: fc.constant([] as [string, string][]) },
    { weight: 1, arbitrary: extraHeadersArb },
  ),
  body: mcpBodyArb,
});

/** Everything around the body right (the caller's key or the victim's, headers matching the body): the body is the test. */
const cleanRequestArb: fc.Arbitrary<McpRequestSpec> = fc.record({
  method: fc.constant('POST'),
  url: fc.constant('/mcp'),
  cred: credArb({ none: 0, key: 8, victim: 1, admin: 0, bad: 0, odd: 0 }),
  host: fc.constant(undefined),
  accept: fc.constant('application/json, text/event-stream'),
  protocolVersion: fc.constant('match'),
  mcpMethod: fc.constant('match'),
  mcpName: fc.constant('match'),
  contentType: fc.constant('application/json'),
  extra: fc.constant([] as [string, string][]),
  body: mcpBodyArb,
});

/**
 * Mostly `POST /mcp` with the caller's key and the right headers, so that the SDK and the tools are
 * reached; otherwise every part goes wrong now and then, and the other methods come up.
 */
export const mcpRequestArb: fc.Arbitrary<McpRequestSpec> = fc.oneof(
  { weight: 2, arbitrary: cleanRequestArb },
  { weight: 3, arbitrary: hostileRequestArb },
);

export interface McpMaterialized extends Materialized {
  spec: McpRequestSpec;
}

/** What the body says of itself, for the headers that are to match it: the first message of a batch. */
function bodyClaims(body: McpBody): { version?: string; method?: string; name?: string } {
  if (body.kind === 'call-args') return { method: 'tools/call', name: 'get_account' };
  if (body.kind !== 'rpc') return {};
  const message = Array.isArray(body.message) ? body.message[0] : body.message;
  if (message === null || typeof message !== 'object') return {};
  const m = message as { method?: unknown; params?: { name?: unknown; _meta?: Record<string, unknown> } };
  const params = m.params !== null && typeof m.params === 'object' ? m.params : {};
  const meta = params._meta !== null && typeof params._meta === 'object' ? params._meta : {};
  const version = meta['io.modelcontextprotocol/protocolVersion'];
  return {
    ...(typeof version === 'string' ? { version } : {}),
    ...(typeof m.method === 'string' ? { method: m.method } : {}),
    ...(typeof params.name === 'string' ? { name: params.name } : {}),
  };
}

/** The headers as sent: 'match' resolved against the body (left out when the body says nothing). */
export function mcpHeaders(spec: McpRequestSpec): [string, string][] {
  const claims = bodyClaims(spec.body);
  const headers: [string, string][] = [];
  const add = (name: string, choice: HeaderChoice, claim: string | undefined) => {
    const value = choice === 'match' ? claim : choice;
    // A header value is a line of text: a claim with a line break in it is left out.
    if (value !== undefined && !/[\r\n]/.test(value)) headers.push([name, value]);
  };
  if (spec.host !== undefined) headers.push(['host', spec.host]);
  if (spec.accept !== undefined) headers.push(['accept', spec.accept]);
  add('mcp-protocol-version', spec.protocolVersion, claims.version ?? '2025-06-18');
  add('mcp-method', spec.mcpMethod, claims.method);
  add('mcp-name', spec.mcpName, claims.method === 'tools/call' ? claims.name : undefined);
  return headers;
}

export function materializeMcp(spec: McpRequestSpec, s: Secrets): McpMaterialized {
  const raw = materializeMcpBody(spec.body);
  // The shared path for headers and placeholders: the body goes as text, resolved there.
  const req = materialize(
    {
      method: spec.method,
      url: spec.url,
      cred: spec.cred,
      contentType: spec.contentType,
      extra: [...spec.extra, ...mcpHeaders(spec)],
      body:
        raw === undefined
          ? { kind: 'none' }
          : typeof raw === 'string'
            ? { kind: 'text', text: raw }
            : { kind: 'bytes', bytes: [...raw] },
    },
    s,
  );
  return { ...req, spec };
}

// ---------------------------------------------------------------------------------------------
// Checks

const REQUEST_ID = /^req_[0-9a-z]{26}$/;

function header(a: Answer, name: string): string | undefined {
  const v = a.headers[name];
  return v === undefined ? undefined : Array.isArray(v) ? v.join(', ') : String(v);
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** A JSON-RPC 2.0 response: `jsonrpc` "2.0", an id, and exactly one of a result or an error with a numeric code. */
function jsonRpcProblem(v: unknown): string | undefined {
  if (!isObject(v)) return 'not an object';
  if (v.jsonrpc !== '2.0') return `jsonrpc is ${JSON.stringify(v.jsonrpc)}`;
  if (!('id' in v)) return 'no id';
  const hasResult = 'result' in v;
  const hasError = 'error' in v;
  if (hasResult === hasError) return 'not exactly one of result and error';
  if (hasError) {
    const e = v.error;
    if (!isObject(e) || !Number.isInteger(e.code) || typeof e.message !== 'string')
      return 'an error without an integer code and a message';
  } else if (!isObject(v.result)) return 'a result that is not an object';
  return undefined;
}

/** The statuses toolgate answers itself, before or instead of the SDK: always its error shape. */
const TOOLGATE_STATUSES = new Set([401, 403, 405, 413, 415, 429]);

/**
 * The invariants every /mcp answer holds, whatever was sent. Returns the parsed body (undefined
 * when there is none).
 */
export function checkMcpAnswer(
  req: Materialized,
  a: Answer,
  s: Secrets,
  serverSecrets: readonly string[] = [],
): unknown {
  const status = a.statusCode;
  const no = (why: string): never => {
    throw new Error(`${why}\n${describe(req, a)}`);
  };
  if (status >= 500) no(`answered ${status}: a hostile request must never cause a 5xx`);
  if (status < 200 || (status >= 300 && status < 400)) no(`answered ${status}: expected a 2xx or a 4xx`);

  const requestId = header(a, 'x-request-id');
  if (!requestId || !REQUEST_ID.test(requestId)) no('no well-formed x-request-id header');

  assertNoSecrets(req, a, s, serverSecrets);

  const isHead = req.method.toUpperCase() === 'HEAD';
  let body: unknown;
  if (a.body === '') {
    // Nothing: a HEAD answer, or an accepted notification (202) or no content (204).
    if (!isHead && status !== 202 && status !== 204) no(`answered ${status} with an empty body`);
  } else {
    if (isHead) no('a HEAD answer carried a body');
    const contentType = header(a, 'content-type') ?? '';
    if (!/^application\/json\b/.test(contentType)) no(`content-type is "${contentType}", not JSON`);
    try {
      body = JSON.parse(a.body) as unknown;
    } catch {
      no('the body is not JSON');
    }
  }

  const toolgateShape = isObject(body) && body.status === 'error';
  if (TOOLGATE_STATUSES.has(status) && body === undefined && !isHead)
    no(`answered ${status} without toolgate's error body`);
  if (TOOLGATE_STATUSES.has(status) && body !== undefined && !toolgateShape)
    no(`answered ${status} without toolgate's error shape`);
  if (toolgateShape) {
    if (status < 400) no(`toolgate's error shape with status ${status}`);
    checkErrorShape(req, a, body as Record<string, unknown>);
  } else if (body !== undefined) {
    // The SDK's answer: a JSON-RPC response, or a batch of them.
    if (Array.isArray(body)) {
      for (const [i, item] of body.entries()) {
        const problem = jsonRpcProblem(item);
        if (problem) no(`batch member ${i} is not a JSON-RPC response: ${problem}`);
      }
    } else {
      const problem = jsonRpcProblem(body);
      if (problem) no(`not a JSON-RPC response: ${problem}`);
    }
  }

  if (
    status === 401 &&
    !['Bearer', 'Bearer error="invalid_token"'].includes(header(a, 'www-authenticate') ?? '')
  )
    no('401 without WWW-Authenticate: Bearer');
  if (status === 405 && header(a, 'allow') !== 'POST') no('405 without Allow: POST');

  // The key is checked before any MCP work: a JSON-RPC answer only for a request carrying a key.
  if (body !== undefined && !toolgateShape) {
    const auth = req.authorization ?? '';
    if (!auth.includes(s.key) && !auth.includes(s.victimKey)) no('an MCP answer to a request without a key');
  }
  return body;
}
