/**
 * Generated hostile input (fast-check), seeded and reproducible: arbitrary methods, paths, headers,
 * content types and bodies, keys of every wrong shape, against the app in process (`inject`), and
 * arbitrary bytes against the app on a real socket. Every answer is below 500 and JSON; a 4xx is
 * the error shape with a code from the closed list whose status it is, and the request id of its
 * header; only the right credential gets a 2xx; nothing pollutes Object.prototype; the server still
 * serves afterwards. The generators are in test/fuzz/.
 *
 * A failure prints the seed, the path and the shrunk counterexample. Replay it with
 *   TOOLGATE_FUZZ_SEED=<seed> TOOLGATE_FUZZ_PATH=<path> npx vitest run test/http/hostile.fuzz.test.ts -t '<test name>'
 * Other switches: TOOLGATE_FUZZ_SCALE=10 (ten times the runs), TOOLGATE_FUZZ_COLLECT=1 (run every
 * case and print each distinct failure instead of stopping at the first), TOOLGATE_FUZZ_STATS=1
 * (print what was answered how often, and the slowest cases).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { bearer, callTool } from '../calls.js';
import {
  type Answer,
  assertNotPolluted,
  checkAnswer,
  describe as describeCase,
  prototypeSnapshot,
} from '../fuzz/hostile-checks.js';
import {
  adminRequestArb,
  anyRequestArb,
  type Materialized,
  materialize,
  type RequestSpec,
  type Secrets,
  toolRequestArb,
} from '../fuzz/hostile-input.js';
import { populate } from '../fuzz/populate.js';
import {
  checkRawAnswer,
  describeRaw,
  type Exchange,
  exchange,
  materializeRaw,
  rawSpecArb,
} from '../fuzz/raw-http.js';
import { fuzzRun, PATH, runs, SCALE, SEED, STATS } from '../fuzz/runner.js';
import {
  ADMIN_TOKEN,
  type AppHarness,
  accountWithKey,
  type Harness,
  scratchApp,
  scratchServices,
} from '../helpers.js';

const RUNS = { anything: 5_000, tools: 3_500, admin: 4_000, rateLimited: 1_500, socket: 300 };
const MIN_INJECT_CASES = 10_000;

/** Cases run over the file (shrinking included), checked at the end. */
const counted = { inject: 0, socket: 0 };
const stats = new Map<string, number>();
/** What the run reached, by answer: so that a generator gone lame is noticed, not just a server gone wrong. */
const reached = new Map<string, number>();
const slowest: { ms: number; what: string }[] = [];
const fuzz = fuzzRun();
const { assertProperty, predicate, collected } = fuzz;

const PROTOTYPES = prototypeSnapshot();

function tally(req: Materialized, answer: Answer, ms: number): void {
  if (!STATS) return;
  const code = answer.body.startsWith('{"status":"error"')
    ? (JSON.parse(answer.body) as { code: string }).code
    : '';
  const key = `${fuzz.current.padEnd(14)} ${answer.statusCode} ${code}`;
  stats.set(key, (stats.get(key) ?? 0) + 1);
  slowest.push({
    ms,
    what: `${fuzz.current}: ${describeCase(req).split('\n').join(' | ').slice(0, 300)}`,
  });
  slowest.sort((a, b) => b.ms - a.ms).splice(5);
}

/** Sends one generated request in process and checks the invariants every answer holds. */
async function send(
  app: AppHarness['app'],
  spec: RequestSpec,
  secrets: Secrets,
): Promise<{ req: Materialized; answer: Answer; body: Record<string, unknown> | undefined }> {
  counted.inject++;
  const req = materialize(spec, secrets);
  const started = performance.now();
  let res: Awaited<ReturnType<AppHarness['app']['inject']>>;
  try {
    res = await app.inject({
      method: req.method as 'GET',
      url: req.url,
      headers: req.headers,
      ...(req.payload === undefined ? {} : { payload: req.payload }),
    });
  } catch (e) {
    throw new Error(`inject threw ${String(e)}\n${describeCase(req)}`);
  }
  const answer: Answer = { statusCode: res.statusCode, headers: res.headers, body: res.body };
  tally(req, answer, performance.now() - started);
  const body = checkAnswer(req, answer, secrets);
  const what =
    answer.statusCode < 300
      ? `${req.url.startsWith('/admin/') ? 'admin' : 'tool'} ${req.method === 'GET' ? 'read' : 'write'} ${answer.statusCode}`
      : String(body?.code);
  reached.set(what, (reached.get(what) ?? 0) + 1);
  assertNotPolluted(PROTOTYPES);
  return { req, answer, body };
}

const isGetAccountCall = (req: Materialized) =>
  req.method === 'POST' && /^\/api\/v1\/tools\/get_account(\?|$)/.test(req.url);

/** The caller's key, `{}` or nothing as JSON, and nothing odd around it: a valid get_account. */
function isValidGetAccount(spec: RequestSpec, req: Materialized): boolean {
  const type = req.headers['content-type'];
  const plain =
    (type === 'application/json' &&
      (req.payload === undefined || ['{}', '', ' ', '{ }', '\n{}\n'].includes(String(req.payload)))) ||
    (type === undefined && req.payload === undefined);
  return isGetAccountCall(req) && spec.cred.value === bearer('{{KEY}}') && spec.extra.length === 0 && plain;
}

describe('hostile input, in process', () => {
  let h: AppHarness;
  let secrets: Secrets;

  beforeAll(async () => {
    h = await scratchApp();
    secrets = await populate(h);
  });

  afterAll(async () => {
    await h?.close();
  });

  it('anything at all: every route, method, header, content type and body', async () => {
    await assertProperty(
      'anything',
      fc.asyncProperty(
        anyRequestArb,
        predicate(async (spec) => {
          await send(h.app, spec, secrets);
        }),
      ),
      runs(RUNS.anything),
    );
  });

  it('tool calls: wrong keys are 401 before the body is read; the right key with {} is 200', async () => {
    await assertProperty(
      'tools',
      fc.asyncProperty(
        toolRequestArb,
        predicate(async (spec) => {
          const { req, answer, body } = await send(h.app, spec, secrets);
          if (isGetAccountCall(req) && ['bad', 'admin', 'none'].includes(spec.cred.cls)) {
            // An empty header or a bare "Bearer" counts as missing; anything else as invalid.
            const expected = {
              none: ['missing_api_key'],
              admin: ['invalid_api_key'],
              bad: ['missing_api_key', 'invalid_api_key'],
            }[spec.cred.cls as 'none' | 'admin' | 'bad'];
            if (answer.statusCode !== 401 || !expected.includes(String(body?.code)))
              throw new Error(`expected 401 ${expected.join(' or ')}\n${describeCase(req, answer)}`);
          }
          if (isValidGetAccount(spec, req) && answer.statusCode !== 200)
            throw new Error(`a valid get_account did not answer 200\n${describeCase(req, answer)}`);
        }),
      ),
      runs(RUNS.tools),
    );
  });

  it('admin calls: ids of every shape, valid and invalid arguments; only the admin token opens it', async () => {
    await assertProperty(
      'admin',
      fc.asyncProperty(
        adminRequestArb,
        predicate(async (spec) => {
          const { req, answer, body } = await send(h.app, spec, secrets);
          // Some generated prefixes climb out of /admin/v1 with "..": those land on other routes.
          const underAdmin = /^\/admin\/v1\//.test(req.url) && !/\.\.|%2e/i.test(req.url);
          if (
            underAdmin &&
            spec.cred.cls !== 'admin' &&
            answer.statusCode === 401 &&
            body &&
            body.code !== 'invalid_admin_token'
          )
            throw new Error(`expected invalid_admin_token\n${describeCase(req, answer)}`);
        }),
      ),
      runs(RUNS.admin),
    );
  });

  it('afterwards the app still serves, and nothing was polluted', async () => {
    assertNotPolluted(PROTOTYPES);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false);
    const res = await callTool(h.app, secrets.key, 'get_account', {});
    expect(res.statusCode).toBe(200);
    expect(res.json().results.name).toBe('Caller');
    const fresh = await accountWithKey(h.services, { name: 'After the storm' });
    const again = await callTool(h.app, fresh.key, 'get_account');
    expect(again.statusCode).toBe(200);
    expect(again.json().results.name).toBe('After the storm');
    expect((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});

describe('hostile input, in process, with the rate limiter on', () => {
  let h: Harness;
  let app: AppHarness['app'];
  let secrets: Secrets;

  beforeAll(async () => {
    h = await scratchServices();
    app = await buildApp({
      services: h.services,
      adminToken: ADMIN_TOKEN,
      // Small budgets, on the harness's fixed clock, which the cases move: both limits trip and reset.
      rateLimits: { perKeyPerSecond: 3, authFailuresPerMinute: 20, clock: h.clock },
    });
    secrets = await populate(h);
  });

  afterAll(async () => {
    await app?.close();
    await h?.close();
  });

  it('tool calls: 429 rate_limited with Retry-After, and where the caller stands on every tool answer', async () => {
    await assertProperty(
      'rate limited',
      fc.asyncProperty(
        fc.oneof(
          { weight: 8, arbitrary: fc.constant(0) },
          { weight: 2, arbitrary: fc.constant(1) },
          { weight: 1, arbitrary: fc.constant(61) },
        ),
        fc.oneof({ weight: 3, arbitrary: toolRequestArb }, { weight: 1, arbitrary: anyRequestArb }),
        predicate(async (seconds, spec) => {
          h.clock.advance(seconds);
          const { req, answer } = await send(app, spec, secrets);
          if (isGetAccountCall(req) && answer.statusCode !== 404) {
            for (const name of ['ratelimit-policy', 'ratelimit'])
              if (answer.headers[name] === undefined)
                throw new Error(`a tool answer without ${name}\n${describeCase(req, answer)}`);
          }
        }),
      ),
      runs(RUNS.rateLimited),
    );
  });
});

describe('hostile bytes, on a real socket', () => {
  let h: AppHarness;
  let secrets: Secrets;
  let port: number;

  beforeAll(async () => {
    h = await scratchApp();
    secrets = await populate(h);
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    port = (h.app.server.address() as { port: number }).port;
  });

  afterAll(async () => {
    await h?.close();
  });

  const HEALTH = Buffer.from('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');

  it('arbitrary bytes, malformed request lines and headers: a JSON error or a closed connection', async () => {
    await assertProperty(
      'socket',
      fc.asyncProperty(
        rawSpecArb,
        predicate(async (spec) => {
          counted.socket++;
          const bytes = materializeRaw(spec, secrets);
          const ex = await exchange(port, bytes);
          const problem = checkRawAnswer(bytes, ex, secrets);
          if (problem) throw new Error(`${problem}\n${describeRaw(bytes, ex)}`);
          assertNotPolluted(PROTOTYPES);
          // Still serving: a well-formed request on a new connection is answered.
          const health = await exchange(port, HEALTH);
          if (!/^HTTP\/1\.1 200 /.test(health.out.toString('latin1')))
            throw new Error(
              `no longer serving after:\n${describeRaw(bytes, ex)}\nthen: ${describeRaw(HEALTH, health)}`,
            );
        }),
      ),
      runs(RUNS.socket),
    );
  });

  /** The first answer's status line, headers and body. */
  const parse = (ex: Exchange) => {
    const text = ex.out.toString('utf8');
    const end = text.indexOf('\r\n\r\n');
    return { head: text.slice(0, end), body: text.slice(end + 4) };
  };

  // Found by the socket property: Node answered an HTTP/1.1 request without Host with a bare 400 of its own.
  it('a request without a Host header gets the JSON error shape', async () => {
    const ex = await exchange(port, Buffer.from('GET /nowhere HTTP/1.1\r\nConnection: close\r\n\r\n'));
    const { head, body } = parse(ex);
    expect(head).toMatch(/^HTTP\/1\.1 404 /);
    expect(head).toMatch(/\r\nx-request-id: req_/i);
    expect(JSON.parse(body)).toMatchObject({ status: 'error', code: 'not_found' });
  });

  // Found by the socket property: Node answered any Expect but 100-continue with a bare 417 of its own.
  it('a request with an unknown Expect header gets the JSON error shape, not a bare 417', async () => {
    const ex = await exchange(
      port,
      Buffer.from(
        'POST /api/v1/tools/get_account HTTP/1.1\r\nHost: x\r\nExpect: nonsense\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
      ),
    );
    const { head, body } = parse(ex);
    expect(head).toMatch(/^HTTP\/1\.1 401 /);
    expect(head).toMatch(/\r\nx-request-id: req_/i);
    expect(JSON.parse(body)).toMatchObject({ status: 'error', code: 'missing_api_key' });
  });

  it('afterwards a valid get_account is answered over the socket', async () => {
    const res = await callTool(port, secrets.key, 'get_account', {});
    expect(res.status).toBe(200);
    expect((res.json() as { results: { name: string } }).results.name).toBe('Caller');
  });
});

describe('the size of the run', () => {
  it(`ran at least ${MIN_INJECT_CASES} generated requests in process, and the socket cases`, () => {
    console.info(
      `hostile fuzz: seed ${SEED}; ${counted.inject} in-process cases, ${counted.socket} socket cases`,
    );
    if (STATS) {
      for (const [key, n] of [...stats].sort()) console.info(`${String(n).padStart(6)} ${key}`);
      for (const { ms, what } of slowest) console.info(`slow: ${ms.toFixed(1)} ms ${what}`);
    }
    for (const [key, { count, example }] of collected) console.info(`\n### ${count}x ${key}\n${example}`);
    expect(collected.size, 'failures collected with TOOLGATE_FUZZ_COLLECT=1').toBe(0);
    // A replay (TOOLGATE_FUZZ_PATH) or a scaled-down run is smaller on purpose.
    if (PATH === undefined && SCALE >= 1) {
      expect(counted.inject).toBeGreaterThanOrEqual(MIN_INJECT_CASES);
      expect(counted.socket).toBeGreaterThanOrEqual(RUNS.socket);
      const mustReach = [
        'tool write 200',
        'admin write 201',
        'admin write 200',
        'admin read 200',
        'rate_limited',
        'fair_use_exceeded',
        'insufficient_tokens',
        'idempotency_conflict',
        'invalid_json',
        'invalid_arguments',
        'payload_too_large',
        'unsupported_media_type',
        'missing_api_key',
        'invalid_api_key',
        'invalid_admin_token',
        'unknown_tool',
        'not_found',
        'method_not_allowed',
      ];
      expect(
        mustReach.filter((w) => !reached.has(w)),
        'answers the run never reached',
      ).toEqual([]);
    }
  });
});
