/**
 * The bench's wrk load (bench/lib/wrk.ts): the generated script sends exactly the requests it was
 * given, in turn, and its figures come back as a Sample. Runs wrk for real against a small HTTP
 * server that records what it receives; skipped only where wrk is not installed (.ci/run installs it).
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadRequest } from '../../bench/lib/load.js';
import { luaString, parseWrkOutput, runWrk, wrkVersion } from '../../bench/lib/wrk.js';
import { bearer } from '../calls.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const seen: Seen[] = [];
let url = '';
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: Buffer.concat(chunks).toString(),
    });
    // Like toolgate: where a key stands, and one refusal to count.
    const refuse = req.url === '/refuse';
    res.writeHead(refuse ? 429 : 200, {
      'ratelimit-policy': '"per-key";q=10;w=1',
      ratelimit: `"per-key";r=${refuse ? 0 : 7};t=1`,
      'content-type': 'text/plain',
    });
    res.end('ok');
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('luaString', () => {
  it('quotes and escapes so that Lua reads back the same bytes', () => {
    expect(luaString('plain')).toBe('"plain"');
    expect(luaString('a "b" \\ c')).toBe('"a \\"b\\" \\\\ c"');
    expect(luaString('é\n')).toBe('"\\195\\169\\10"');
  });
});

describe('parseWrkOutput', () => {
  it('reads the figures line and refuses output without one', () => {
    const line =
      'TOOLGATE_BENCH_WRK {"requests":100,"duration_us":2000000,"p50_us":900,"p99_us":4100,"mean_us":1000.5,' +
      '"connect":0,"read":1,"write":0,"timeout":2,"statuses":{"200":97,"429":3},"busiest":4,"min_remaining":0,"limit":10}';
    const s = parseWrkOutput(`Running 2s test\n${line}\n`, 50);
    expect(s).toMatchObject({
      rps: 50,
      p50: 0.9,
      p99: 4.1,
      total: 100,
      ok: 97,
      non2xx: 3,
      errors: 3,
      timeouts: 2,
    });
    expect(s.statusCodes).toEqual({ '200': 97, '429': 3 });
    expect(s.perKey).toEqual({ slots: 50, maxPerSecond: 4, limit: 10, limiterMaxCount: 10 });
    expect(() => parseWrkOutput('Running 2s test\n', 1)).toThrow(/no figures/);
  });
});

describe.skipIf(wrkVersion() === null)('runWrk', () => {
  it('sends each request as given, in turn, and counts answers by status and the limiter', async () => {
    seen.length = 0;
    const requests: LoadRequest[] = [
      {
        method: 'POST',
        path: '/a',
        headers: { authorization: bearer('k1'), 'content-type': 'application/json' },
        body: '{"x":"é \\"q\\""}',
        slot: 0,
      },
      { method: 'POST', path: '/b?n=1', headers: { authorization: bearer('k2') }, body: '{}', slot: 1 },
      { method: 'GET', path: '/refuse', headers: { 'x-note': 'three' }, slot: 2 },
    ];
    const sample = await runWrk(url, requests, { connections: 1, duration: 1 });
    expect(seen.length).toBeGreaterThan(30);
    for (const want of requests) {
      const got = seen.find((s) => s.url === want.path)!;
      expect(got.method).toBe(want.method);
      expect(got.body).toBe(want.body ?? '');
      for (const [name, value] of Object.entries(want.headers)) expect(got.headers[name]).toBe(value);
    }
    // In turn: each request is followed by the next in the list (wrk calls the script once before
    // it starts, so the first one sent is the second of the list).
    const order = requests.map((r) => r.path);
    for (let i = 1; i < seen.length; i++) {
      const previous = order.indexOf(seen[i - 1]!.url);
      expect(seen[i]!.url).toBe(order[(previous + 1) % order.length]);
    }
    // wrk counts the answers it received before its time was up; one more may have been in flight.
    expect(seen.length - sample.total).toBeGreaterThanOrEqual(0);
    expect(seen.length - sample.total).toBeLessThanOrEqual(1);
    expect(sample.statusCodes['429']).toBe(sample.non2xx);
    expect(sample.ok + sample.non2xx).toBe(sample.total);
    expect(sample.perKey.slots).toBe(3);
    expect(sample.perKey.limit).toBe(10);
    expect(sample.perKey.limiterMaxCount).toBe(10);
    expect(sample.perKey.maxPerSecond).toBeGreaterThanOrEqual(Math.floor(sample.total / 3 / 2));
  });
});
