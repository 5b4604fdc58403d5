/**
 * @module What the `proxied` scenarios share: the upstream (bench/upstream.ts) and the proxying
 * baseline (bench/proxy-baseline.ts), each started once per run in its own process, the first time a
 * proxied scenario runs, and stopped with the scenarios' other processes; and, in each toolgate, the
 * catalogue tools that forward to that same upstream, created through the admin API. The scale
 * comparison (lib/scale.ts) starts an upstream of its own and serves the metered tool the same way.
 */
import { join } from 'node:path';
import type { Fixture } from '../scenarios/scenario.js';
import { call, expectStatus, forEachConcurrently } from './admin.js';
import { spawnNode, waitForOutput } from './processes.js';
import type { Target, ToolgateTarget } from './targets.js';

/** The catalogue tools of the proxied scenarios: metered (category search), free, and charged. */
export const METERED_TOOL = 'bench_search';
export const FREE_TOOL = 'bench_free';
export const CHARGED_TOOL = 'bench_charged';
/** The records pointer of the metered tools: the upstream answers 10 results, so 10 records a call. */
export const RECORDS_PER_CALL = 10;
/** The charged tool's price: a token a record, so 10 a call. */
export const TOKENS_PER_RECORD = 1;
/** What each account is granted before the charged tool's load: far more than a run can spend. */
export const CHARGED_GRANT = 1_000_000_000;

export type ProxiedKind = 'metered' | 'free' | 'charged';

/** The body of `PUT /admin/v1/tools/<name>` for a tool forwarding to `upstreamUrl`. */
export function toolDefinition(upstreamUrl: string, kind: ProxiedKind): Record<string, unknown> {
  return {
    description: `bench: forwards to the bench's upstream (${kind})`,
    input_schema: { type: 'object' },
    upstream: { url: `${upstreamUrl}/tool` },
    ...(kind === 'free'
      ? {}
      : {
          metering: {
            category: 'search',
            records_pointer: '/results',
            tokens_per_record: kind === 'charged' ? TOKENS_PER_RECORD : 0,
          },
        }),
  };
}

interface Shared {
  upstream: Target;
  baseline: Target;
}

let shared: Promise<Shared> | null = null;

const DIR = join(import.meta.dirname, '..');
const ENV = { HOST: '127.0.0.1', PORT: '0', NODE_ENV: 'production' };

/** A new upstream process (bench/upstream.ts), stopped by the cleanup of what started it. */
export async function startUpstream(): Promise<Target> {
  const child = spawnNode('upstream', join(DIR, 'upstream.js'), ENV);
  const u = await waitForOutput(child, /upstream listening (http:\/\/\S+)/);
  return { name: 'upstream', url: u[1]!, child };
}

/** The upstream, then the proxying baseline pointed at it; once per run (cleanup stops both). */
function startShared(): Promise<Shared> {
  shared ??= (async () => {
    const upstream = await startUpstream();
    const baselineChild = spawnNode('proxy baseline', join(DIR, 'proxy-baseline.js'), {
      ...ENV,
      UPSTREAM_URL: `${upstream.url}/tool`,
    });
    const b = await waitForOutput(baselineChild, /proxy baseline listening (http:\/\/\S+)/);
    return { upstream, baseline: { name: 'baseline', url: b[1]!, child: baselineChild } };
  })();
  return shared;
}

const created = new Set<string>();

/**
 * The fixture of a proxied scenario: the proxying baseline instead of the constant one, the upstream
 * (whose CPU the runner measures beside the server's), and the tool created in this toolgate and
 * served (toolgate picks catalogue changes up by polling, so the first calls may still be 404s). For
 * the charged tool, every account is granted CHARGED_GRANT tokens first (the seeded ones have none).
 */
export async function proxiedFixture(f: Fixture, tool: string, kind: ProxiedKind): Promise<Fixture> {
  const { upstream, baseline } = await startShared();
  const key = `${f.toolgate.url} ${tool}`;
  if (!created.has(key)) {
    if (kind === 'charged') await grantAll(f);
    await serveTool(f.toolgate, f.accounts[0]!.key, tool, toolDefinition(upstream.url, kind));
    created.add(key);
  }
  return { ...f, baseline, upstream };
}

async function grantAll(f: Fixture): Promise<void> {
  const { url, adminToken } = f.toolgate;
  await forEachConcurrently(f.accounts.length, 8, async (i) => {
    await expectStatus(201, url, adminToken, 'POST', `/admin/v1/accounts/${f.accounts[i]!.id}/tokens`, {
      kind: 'grant',
      amount: CHARGED_GRANT,
      reason: 'bench',
    });
  });
}

/**
 * Creates the tool in toolgate and waits until it is served (toolgate picks catalogue changes up by
 * polling), calling it with `key`: one call counted by the tool's meters, none by the load generator.
 */
export async function serveTool(
  t: ToolgateTarget,
  key: string,
  name: string,
  definition: Record<string, unknown>,
): Promise<void> {
  await putTool(t, name, definition);
  await waitServed(t, key, name);
}

async function putTool(t: ToolgateTarget, name: string, definition: Record<string, unknown>) {
  const answer = await call(t.url, t.adminToken, 'PUT', `/admin/v1/tools/${name}`, definition);
  if (answer.status !== 200 && answer.status !== 201)
    throw new Error(
      `PUT /admin/v1/tools/${name}: expected 200 or 201, got ${answer.status}: ${JSON.stringify(answer.body).slice(0, 500)}`,
    );
}

/** Polls the tool with `key` (its calls are not counted by the load generator) until it is served. */
async function waitServed(t: ToolgateTarget, key: string, tool: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await fetch(`${t.url}/api/v1/tools/${tool}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{"q":"x"}',
      signal: AbortSignal.timeout(10_000),
    });
    const text = await r.text();
    if (r.status === 200) return;
    if (r.status !== 404 || Date.now() > deadline)
      throw new Error(`toolgate does not serve ${tool}: ${r.status} ${text.slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
