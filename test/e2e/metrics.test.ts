/**
 * `/metrics` on a real server process: after real calls (answered, refused, rate-limited, proxied
 * to a real upstream, over HTTP and MCP) the Prometheus text holds each series with the right
 * counts and only bounded labels: tool names the registry knows, never a key, an account id or an
 * invented name.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, mcpPost } from '../calls.js';
import { scratchDir } from '../helpers.js';
import { sendJson, startTestUpstream, type TestUpstream } from '../upstream/test-upstream.js';
import { accountWithKey, adminCall, E2E_ADMIN_TOKEN } from './admin-client.js';
import { type ServerProcess, startServer } from './process.js';

/** The value of the sample with exactly these labels, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const got = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    const wanted = Object.entries(labels);
    if (wanted.length === Object.keys(got).length && wanted.every(([k, v]) => got[k] === v))
      return Number(m[2]);
  }
  return undefined;
}

describe('/metrics', () => {
  const { dir, cleanup } = scratchDir();
  let server: ServerProcess;
  let upstream: TestUpstream;
  let metricsUrl: string;

  beforeAll(async () => {
    upstream = await startTestUpstream();
    upstream.on('people', (_call, res) => sendJson(res, 200, { results: [{ name: 'a' }, { name: 'b' }] }));
    upstream.on('broken', (_call, res) => sendJson(res, 500, { error: 'boom' }));
    server = await startServer({
      TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 't.db')}`,
      TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
      TOOLGATE_KEY_SECRET: 'e2e-key-secret-0123456789abcdef0123456789',
      TOOLGATE_METRICS_PORT: '0',
      TOOLGATE_RATE_LIMIT: '5',
      NODE_ENV: 'production',
    });
    metricsUrl = /"metrics":"(http:[^"]+)"/.exec(server.stdout())![1]!;
  });
  afterAll(async () => {
    await server?.stop();
    await upstream.close();
    cleanup();
  });

  it('counts calls by tool, door and status, consumptions, upstream calls and denials, with bounded labels', async () => {
    const url = server.url;
    const tool = (path: string, tokens: number) => ({
      upstream: { url: `${upstream.url}/${path}` },
      metering: { category: 'search', records_pointer: '/results', tokens_per_record: tokens },
    });
    expect((await adminCall(url, 'PUT', '/tools/search_people', tool('people', 1))).status).toBe(201);
    expect((await adminCall(url, 'PUT', '/tools/broken_tool', tool('broken', 0))).status).toBe(201);
    const { id, key } = await accountWithKey(url);
    const call = (name: string, k = key) => callTool(url, k, name, {});
    await new Promise((r) => setTimeout(r, 1_100)); // a fresh rate-limit second
    expect((await call('get_account')).status).toBe(200);
    expect((await call('search_people')).status).toBe(200);
    expect((await call('broken_tool')).status).toBe(502);
    expect((await call('no_such_tool_x1')).status).toBe(404);
    expect((await call('get_account', 'tg_AAAAAAAAAAA')).status).toBe(401);
    const statuses: number[] = [];
    // Until the per-key limit (5 a second) refuses one, however the seconds fall.
    while (!statuses.includes(429) && statuses.length < 100)
      statuses.push((await call('get_account')).status);
    expect(statuses).toContain(429);
    await new Promise((r) => setTimeout(r, 1_100)); // a fresh second for the MCP call
    const mcp = await mcpPost(
      url,
      key,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_account', arguments: {} } },
      { 'mcp-protocol-version': '2025-06-18' },
    );
    await new Promise((r) => setTimeout(r, 1_100));

    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(
      sample(text, 'toolgate_requests_total', { tool: 'get_account', surface: 'http', status: '200' }),
    ).toBe(1 + statuses.filter((s) => s === 200).length);
    expect(
      sample(text, 'toolgate_requests_total', { tool: 'get_account', surface: 'http', status: '429' }),
    ).toBe(statuses.filter((s) => s === 429).length);
    expect(
      sample(text, 'toolgate_requests_total', { tool: 'get_account', surface: 'http', status: '401' }),
    ).toBe(1);
    expect(
      sample(text, 'toolgate_requests_total', { tool: 'search_people', surface: 'http', status: '200' }),
    ).toBe(1);
    expect(
      sample(text, 'toolgate_requests_total', { tool: 'broken_tool', surface: 'http', status: '502' }),
    ).toBe(1);
    expect(sample(text, 'toolgate_requests_total', { tool: 'unknown', surface: 'http', status: '404' })).toBe(
      1,
    );
    expect(mcp.status).toBe(200);
    expect(
      sample(text, 'toolgate_requests_total', { tool: 'get_account', surface: 'mcp', status: '200' }),
    ).toBe(1);
    expect(
      sample(text, 'toolgate_request_duration_seconds_count', { tool: 'search_people', surface: 'http' }),
    ).toBe(1);
    // Timed for real: from arrival to the answer, over a real upstream (more than nothing, well under a minute).
    const took = sample(text, 'toolgate_request_duration_seconds_sum', {
      tool: 'search_people',
      surface: 'http',
    });
    expect(took).toBeGreaterThan(0);
    expect(took).toBeLessThan(60);
    expect(sample(text, 'toolgate_consumptions_total', { outcome: 'committed' })).toBe(1);
    expect(
      sample(text, 'toolgate_upstream_calls_total', { tool: 'search_people', outcome: 'answered' }),
    ).toBe(1);
    expect(
      sample(text, 'toolgate_upstream_calls_total', { tool: 'broken_tool', outcome: 'upstream_error' }),
    ).toBe(1);
    expect(sample(text, 'toolgate_rate_limited_total', { limit: 'per-key' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'toolgate_process_resident_memory_bytes')).toBeGreaterThan(0);
    // Bounded labels: no invented tool name, no key, no account id anywhere.
    expect(text).not.toMatch(/no_such_tool_x1/);
    expect(text).not.toContain(key);
    expect(text).not.toContain(id);
    expect(text).not.toMatch(/tg_AAAA/);
  });

  it('answers only GET /metrics on its port, and is not on the public port', async () => {
    expect((await fetch(metricsUrl.replace('/metrics', '/other'))).status).toBe(404);
    expect((await fetch(metricsUrl, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
  });
});
