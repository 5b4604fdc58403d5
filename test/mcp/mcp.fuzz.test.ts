/**
 * Generated hostile input against /mcp (fast-check), seeded and reproducible: JSON-RPC messages of
 * both protocol eras right and wrong in every member (jsonrpc, ids, methods, params, the `_meta`
 * envelope), batches, JSON that is not JSON-RPC, bodies that are not JSON, every credential,
 * Accept, MCP-Protocol-Version and content type, and the other methods. In process (`inject`) and
 * over a real socket. Every answer is below 500; a 401/405/413/415/429 is toolgate's error shape
 * (a 401 with WWW-Authenticate: Bearer, a 405 with Allow: POST); anything else is empty or JSON
 * (JSON-RPC responses, or toolgate's error shape); no key or token comes back; nothing pollutes
 * Object.prototype; a JSON-RPC answer only ever for a key; the server still serves afterwards.
 * The generators and the check are in test/fuzz/mcp-input.ts.
 *
 * A failure prints the seed, the path and the shrunk counterexample. Replay it with
 *   TOOLGATE_FUZZ_SEED=<seed> TOOLGATE_FUZZ_PATH=<path> npx vitest run test/mcp/mcp.fuzz.test.ts -t '<test name>'
 * Other switches (TOOLGATE_FUZZ_SCALE, _COLLECT, _STATS) as in test/fuzz/runner.ts.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, mcpPost } from '../calls.js';
import {
  type Answer,
  assertNotPolluted,
  describe as describeCase,
  prototypeSnapshot,
} from '../fuzz/hostile-checks.js';
import type { Secrets } from '../fuzz/hostile-input.js';
import {
  checkMcpAnswer,
  type McpMaterialized,
  type McpRequestSpec,
  materializeMcp,
  mcpHeaders,
  mcpRequestArb,
  modernHeaders,
  modernRequest,
} from '../fuzz/mcp-input.js';
import { populate } from '../fuzz/populate.js';
import { exchange } from '../fuzz/raw-http.js';
import { fuzzRun, PATH, runs, SCALE, SEED, STATS } from '../fuzz/runner.js';
import { type AppHarness, KEY_SECRET, scratchApp } from '../helpers.js';

const RUNS = { inject: 1_500, rateLimited: 300, socket: 150 };
const ACCEPT = 'application/json, text/event-stream';

const fuzz = fuzzRun();
const counted = { inject: 0, socket: 0 };
/** What the run reached, by answer: so that a generator gone lame is noticed, not just a server gone wrong. */
const reached = new Map<string, number>();
const PROTOTYPES = prototypeSnapshot();

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** A short name for an answer: `401 missing_api_key`, `200 result`, `200 rpc-error -32602`, `202 empty`... */
function classify(req: McpMaterialized, answer: Answer, body: unknown): string {
  const sent = typeof req.payload === 'string' ? req.payload : '';
  const era = sent.includes('"io.modelcontextprotocol/protocolVersion":"2026-07-28"') ? ' modern' : ' legacy';
  const one = Array.isArray(body) ? body[0] : body;
  if (Array.isArray(body) && body.length === 0) return `${answer.statusCode} empty-array`;
  if (body === undefined) return `${answer.statusCode} empty`;
  if (isObject(one) && one.status === 'error') return `${answer.statusCode} ${String(one.code)}`;
  if (isObject(one) && isObject(one.error)) return `${answer.statusCode} rpc-error ${String(one.error.code)}`;
  if (isObject(one) && isObject(one.result)) {
    const sc = one.result.structuredContent;
    if (one.result.isError === true && isObject(sc))
      return `${answer.statusCode} tool-error ${String(sc.code)}`;
    if (isObject(sc) && isObject(sc.results)) return `${answer.statusCode} tool-result${era}`;
    return `${answer.statusCode} result${era}`;
  }
  return `${answer.statusCode} other`;
}

const ROUTED = ['POST', 'GET', 'DELETE', 'PUT', 'PATCH'];

/** An Origin that is plainly the request's own (a loopback Host, the same host and port): served. */
function ownOrigin(req: McpMaterialized): boolean {
  const host = (req.headers.host ?? '127.0.0.1').toLowerCase();
  const loopback = /^(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/.test(host);
  return loopback && [`http://${host}`, `https://${host}`].includes(req.headers.origin ?? '');
}

/** Checks one answer, and the properties that hold of this request in particular. */
function check(
  spec: McpRequestSpec,
  req: McpMaterialized,
  answer: Answer,
  secrets: Secrets,
  over: 'inject' | 'socket',
): void {
  const body = checkMcpAnswer(req, answer, secrets, [KEY_SECRET]);
  const what = classify(req, answer, body);
  reached.set(what, (reached.get(what) ?? 0) + 1);
  assertNotPolluted(PROTOTYPES);
  const exact = req.url === '/mcp' || req.url.startsWith('/mcp?');
  // Over a socket, Node refuses headers over its limit (431) or not well-formed (400) before any route.
  const byNode =
    over === 'socket' &&
    (answer.statusCode === 431 ||
      (answer.statusCode === 400 && (body as { code?: unknown } | undefined)?.code === 'invalid_arguments'));
  // A browser's Origin is judged first, before the key: none the cases send is the server's own or listed.
  if (exact && Object.hasOwn(req.headers, 'origin') && ROUTED.includes(req.method) && !ownOrigin(req)) {
    if ((answer.statusCode !== 403 || classify(req, answer, body) !== '403 origin_not_allowed') && !byNode)
      throw new Error(`an Origin that is not allowed was not 403\n${describeCase(req, answer)}`);
    return;
  }
  // The key is checked before the rest: a POST to /mcp without a key is 401, whatever it carries.
  if (exact && req.method === 'POST' && ['none', 'admin', 'bad'].includes(spec.cred.cls)) {
    if (answer.statusCode !== 401 && !byNode)
      throw new Error(`a POST /mcp without a valid key was not 401\n${describeCase(req, answer)}`);
  }
  // Whose account a tool call answers: the key's own, never another's.
  const one = Array.isArray(body) ? undefined : body;
  if (isObject(one) && isObject(one.result) && isObject(one.result.structuredContent)) {
    const results = one.result.structuredContent.results;
    const auth = req.authorization ?? '';
    const owner = auth.includes(secrets.key) ? 'Caller' : auth.includes(secrets.victimKey) ? 'Victim' : '?';
    if (isObject(results) && 'name' in results && results.name !== owner)
      throw new Error(
        `a tool answered for ${String(results.name)}, the key is ${owner}'s\n${describeCase(req, answer)}`,
      );
  }
  // Only a tools/call answers a rate-limit refusal in-band; it is never an HTTP 429.
  if (
    answer.statusCode === 429 &&
    spec.body.kind === 'rpc' &&
    isObject(spec.body.message) &&
    spec.body.message.method === 'tools/call'
  )
    throw new Error(`a tools/call refused as HTTP 429, not in-band\n${describeCase(req, answer)}`);
  // The other methods are 405; one with a body may be refused for that body first (parsed before the route).
  if (exact && ['GET', 'DELETE', 'PUT', 'PATCH'].includes(req.method)) {
    const bodyFirst = req.method !== 'GET' && [400, 413, 415].includes(answer.statusCode);
    if (answer.statusCode !== 405 && !bodyFirst)
      throw new Error(`${req.method} /mcp was not 405\n${describeCase(req, answer)}`);
  }
}

/**
 * A header value as the route sees it when it comes off a socket: Node decodes header bytes as
 * latin1, so a character above U+00FF never reaches a route over HTTP/1.1 (and a value with a line
 * break or a NUL is refused by Node itself: such a case is not sent). `inject` would hand it
 * over as is, and the route's web Request refuses it (a 500 that no client on a socket can cause;
 * the socket property below sends such values as UTF-8 bytes).
 */
const asOffTheWire = (headers: Record<string, string>): Record<string, string> | undefined => {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    // A line break or a NUL in a value: Node refuses the request itself (400) before any route.
    if (/[\r\n\0]/.test(value)) return undefined;
    Object.defineProperty(out, name, {
      value: [...value].some((c) => c.charCodeAt(0) > 0xff) ? Buffer.from(value).toString('latin1') : value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
};

async function inject(app: AppHarness['app'], spec: McpRequestSpec, secrets: Secrets): Promise<void> {
  counted.inject++;
  const req = materializeMcp(spec, secrets);
  const headers = asOffTheWire(req.headers);
  if (headers === undefined) {
    reached.set('not sendable', (reached.get('not sendable') ?? 0) + 1);
    return;
  }
  let res: Awaited<ReturnType<AppHarness['app']['inject']>>;
  try {
    res = await app.inject({
      method: req.method as 'GET',
      url: req.url,
      headers,
      ...(req.payload === undefined ? {} : { payload: req.payload }),
    });
  } catch (e) {
    throw new Error(`inject threw ${String(e)}\n${describeCase(req)}`);
  }
  check(spec, req, { statusCode: res.statusCode, headers: res.headers, body: res.body }, secrets, 'inject');
}

/** Header values a socket can carry as they are (no line breaks, no NUL). */
const socketSafe = (spec: McpRequestSpec) =>
  [spec.cred.value, spec.contentType, ...[...spec.extra, ...mcpHeaders(spec)].flat()].every(
    (v) => v === undefined || !/[\r\n\0]/.test(v),
  ) &&
  // Framing is the raw socket property's business (hostile.fuzz.test.ts): here, one request per connection.
  spec.extra.every(
    ([n]) => !['content-length', 'transfer-encoding', 'connection', 'host', 'expect', 'upgrade'].includes(n),
  );

function toBytes(req: McpMaterialized): Buffer {
  const body =
    req.payload === undefined
      ? Buffer.alloc(0)
      : typeof req.payload === 'string'
        ? Buffer.from(req.payload)
        : req.payload;
  const lines = [`${req.method} ${req.url} HTTP/1.1`, 'Connection: close'];
  if (req.headers.host === undefined) lines.push('Host: 127.0.0.1');
  for (const [name, value] of Object.entries(req.headers)) lines.push(`${name}: ${value}`);
  if (req.payload !== undefined || req.method.toUpperCase() === 'POST')
    lines.push(`Content-Length: ${body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]);
}

/** The first final answer on the wire, as an `Answer` (chunked bodies decoded). */
function parseAnswer(out: Buffer): Answer | string {
  let text = out.toString('latin1');
  for (;;) {
    const m = /^HTTP\/1\.1 (\d{3}) [^\r\n]*\r\n/.exec(text);
    if (!m) return 'the answer does not start with an HTTP/1.1 status line';
    const end = text.indexOf('\r\n\r\n');
    if (end < 0) return 'the answer has no end of headers';
    const headers: Record<string, string> = {};
    for (const line of text.slice(m[0].length, end).split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    text = text.slice(end + 4);
    const statusCode = Number(m[1]);
    if (statusCode < 200) continue;
    let raw = text;
    if (headers['transfer-encoding'] === 'chunked') {
      raw = '';
      for (let rest = text; ; ) {
        const nl = rest.indexOf('\r\n');
        const size = Number.parseInt(rest.slice(0, nl), 16);
        if (nl < 0 || !Number.isFinite(size)) return 'a broken chunked body';
        if (size === 0) break;
        raw += rest.slice(nl + 2, nl + 2 + size);
        rest = rest.slice(nl + 2 + size + 2);
      }
    } else if (headers['content-length'] !== undefined) {
      raw = text.slice(0, Number(headers['content-length']));
    }
    return { statusCode, headers, body: Buffer.from(raw, 'latin1').toString('utf8') };
  }
}

describe('/mcp, hostile input in process', () => {
  let h: AppHarness;
  let secrets: Secrets;

  beforeAll(async () => {
    h = await scratchApp({ catalogue: {} });
    secrets = await populate(h);
  });

  afterAll(async () => {
    await h?.close();
  });

  it('every method, credential, header and body: below 500, the right shape, no secret, a key first', async () => {
    await fuzz.assertProperty(
      'mcp inject',
      fc.asyncProperty(
        mcpRequestArb,
        fuzz.predicate(async (spec) => inject(h.app, spec, secrets)),
      ),
      runs(RUNS.inject),
    );
  });

  it('afterwards tools/list is answered for the caller, in both eras, and nothing was polluted', async () => {
    assertNotPolluted(PROTOTYPES);
    const modern = await mcpPost(h.app, secrets.key, modernRequest('tools/list'), {
      accept: ACCEPT,
      ...modernHeaders('tools/list'),
    });
    expect(modern.statusCode).toBe(200);
    expect(modern.json().result.tools.map((t: { name: string }) => t.name)).toContain('get_account');
    const legacy = await mcpPost(
      h.app,
      secrets.key,
      { jsonrpc: '2.0', id: 7, method: 'tools/list' },
      { accept: ACCEPT, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(legacy.statusCode).toBe(200);
    expect(legacy.json().result.tools.map((t: { name: string }) => t.name)).toContain('get_account');
  });
});

describe('/mcp, hostile input in process, with the rate limiter on', () => {
  let h: AppHarness;
  let secrets: Secrets;

  beforeAll(async () => {
    // 3 per second on the harness's fixed clock, which the cases move: the limit trips and resets.
    h = await scratchApp({ catalogue: {}, perKeyPerSecond: 3 });
    secrets = await populate(h);
  });

  afterAll(async () => {
    await h?.close();
  });

  it('a refused tools/call is an isError rate_limited result; anything else refused is a 429', async () => {
    await fuzz.assertProperty(
      'mcp rate limited',
      fc.asyncProperty(
        fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.constant(1) }),
        mcpRequestArb,
        fuzz.predicate(async (seconds, spec) => {
          h.clock.advance(seconds);
          await inject(h.app, spec, secrets);
        }),
      ),
      runs(RUNS.rateLimited),
    );
  });
});

describe('/mcp, hostile input on a real socket', () => {
  let h: AppHarness;
  let secrets: Secrets;
  let port: number;

  beforeAll(async () => {
    h = await scratchApp({ catalogue: {} });
    secrets = await populate(h);
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    port = (h.app.server.address() as { port: number }).port;
  });

  afterAll(async () => {
    await h?.close();
  });

  it('the same requests over HTTP/1.1: the same invariants, and the connection is answered', async () => {
    await fuzz.assertProperty(
      'mcp socket',
      fc.asyncProperty(
        mcpRequestArb.filter(socketSafe),
        fuzz.predicate(async (spec) => {
          counted.socket++;
          const req = materializeMcp(spec, secrets);
          const ex = await exchange(port, toBytes(req));
          const answer = ex.hung
            ? 'the server neither answered nor closed the connection'
            : parseAnswer(ex.out);
          if (typeof answer === 'string')
            throw new Error(
              `${answer}\n${describeCase(req)}\nreceived: ${JSON.stringify(ex.out.subarray(0, 400).toString('latin1'))}`,
            );
          check(spec, req, answer, secrets, 'socket');
        }),
      ),
      runs(RUNS.socket),
    );
  });

  /** One POST /mcp with the caller's key over the socket: the status line and the body. */
  const post = async (lines: string[], body: string) => {
    const head = [
      'POST /mcp HTTP/1.1',
      'Connection: close',
      `Authorization: ${bearer(secrets.key)}`,
      ...lines,
    ];
    const ex = await exchange(
      port,
      Buffer.from(`${head.join('\r\n')}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`),
    );
    const text = ex.out.toString('utf8');
    return { status: text.split('\r\n')[0], body: text.slice(text.indexOf('\r\n\r\n') + 4) };
  };

  // Found by the socket property: the route builds a web Request from `http://<Host><url>`, and a
  // Host that is no URL host made that throw, a 500 for any caller with a key.
  it('a Host header that is no URL host is not a 5xx', async () => {
    for (const host of ['a b', '%', '"^*']) {
      const res = await post(
        [
          `Host: ${host}`,
          'Content-Type: application/json',
          `Accept: ${ACCEPT}`,
          'MCP-Protocol-Version: 2025-06-18',
        ],
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      );
      expect(res.status, `Host: ${host}`).not.toMatch(/^HTTP\/1\.1 5/);
    }
  });

  // Found by the in-process property: without a Content-Type and a body, the SDK answered its own
  // 415 (a JSON-RPC error), where any other media type problem is toolgate's 415.
  it("a POST without a Content-Type or a body is a 415 in toolgate's error shape", async () => {
    const res = await post(['Host: 127.0.0.1', `Accept: ${ACCEPT}`, 'MCP-Protocol-Version: 2025-06-18'], '');
    expect(res.status).toMatch(/^HTTP\/1\.1 415 /);
    expect(JSON.parse(res.body)).toMatchObject({ status: 'error', code: 'unsupported_media_type' });
  });

  it('afterwards tools/list is answered for the caller over the socket', async () => {
    const res = await mcpPost(port, secrets.key, modernRequest('tools/list'), {
      accept: ACCEPT,
      ...modernHeaders('tools/list'),
    });
    expect(res.status).toBe(200);
    const body = res.json() as { result: { tools: { name: string }[] } };
    expect(body.result.tools.map((t) => t.name)).toContain('get_account');
  });
});

describe('/mcp, the size of the run', () => {
  it('ran the cases, and reached the answers that matter', () => {
    console.info(
      `mcp fuzz: seed ${SEED}; ${counted.inject} in-process cases, ${counted.socket} socket cases`,
    );
    if (STATS) for (const [key, n] of [...reached].sort()) console.info(`${String(n).padStart(6)} ${key}`);
    for (const [key, { count, example }] of fuzz.collected)
      console.info(`\n### ${count}x ${key}\n${example}`);
    expect(fuzz.collected.size, 'failures collected with TOOLGATE_FUZZ_COLLECT=1').toBe(0);
    // A replay (TOOLGATE_FUZZ_PATH) or a scaled-down run is smaller on purpose.
    if (PATH === undefined && SCALE >= 1) {
      expect(counted.inject).toBeGreaterThanOrEqual(RUNS.inject + RUNS.rateLimited);
      expect(counted.socket).toBeGreaterThanOrEqual(RUNS.socket);
      const mustReach = [
        '200 result legacy',
        '200 result modern',
        '200 tool-result legacy',
        '200 tool-result modern',
        '200 tool-error rate_limited',
        '200 rpc-error -32602',
        '202 empty',
        '400 invalid_json',
        '400 rpc-error -32600',
        '400 rpc-error -32020',
        '400 rpc-error -32022',
        '401 missing_api_key',
        '401 invalid_api_key',
        '403 origin_not_allowed',
        '405 method_not_allowed',
        '406 rpc-error -32000',
        '413 payload_too_large',
        '415 unsupported_media_type',
        '429 rate_limited',
      ];
      expect(
        mustReach.filter((w) => !reached.has(w)),
        'answers the run never reached',
      ).toEqual([]);
    }
  });
});
