/**
 * @module The calls of the scale comparison (`--scale`, lib/scale.ts): each sent alike to toolgate on
 * a small and on a large seeded database, rotating over keys spread evenly over each. get_account is
 * the read path; the metered call is the proxied scenarios' `bench_search` (category search, 10
 * records a call, no tokens), whose consumption writes the account's `search` windows on every call,
 * so it meets the large database's fair-use rows (lib/seed-fair-use.ts) where get_account meets only
 * its keys and accounts.
 */
import { SCALE_TARGET } from '../lib/goals.js';
import type { LoadRequest } from '../lib/load.js';
import { METERED_TOOL, RECORDS_PER_CALL } from '../lib/proxied.js';

export interface ScaleCall {
  /** The id in bench/results/latest.json and in the warnings. */
  id: string;
  /** What the tables call it, before `, 1M accounts against 1k`. */
  title: string;
  description: string;
  /** The least large / small req/s ratio. */
  target: number;
  /** Whether it calls the bench's upstream (the metered catalogue tool). */
  upstream: boolean;
  request(key: string): Omit<LoadRequest, 'slot'>;
  /** The body of toolgate's answer to the first sampled key: null when right, else what is wrong. */
  check(body: unknown, accountId: string): string | null;
}

const headers = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

export const SCALE_GET_ACCOUNT: ScaleCall = {
  id: 'scale',
  title: 'get_account',
  description: 'POST /api/v1/tools/get_account {} with a bearer API key: the read path',
  target: SCALE_TARGET,
  upstream: false,
  request: (key) => ({
    method: 'POST',
    path: '/api/v1/tools/get_account',
    headers: headers(key),
    body: '{}',
  }),
  check(body, accountId) {
    const b = body as { status?: unknown; results?: { id?: unknown } } | null;
    if (b?.status !== 'ok') return `status is ${JSON.stringify(b?.status)}, not "ok"`;
    if (b.results?.id !== accountId) return `results.id is not the seeded account ${accountId}`;
    return null;
  },
};

export const SCALE_METERED: ScaleCall = {
  id: 'scale_metered',
  title: 'metered call',
  description: `POST /api/v1/tools/${METERED_TOOL} {"q":"x"} with a bearer API key: a catalogue tool forwarding to the bench's upstream, ${RECORDS_PER_CALL} records a call counted against the account's search windows and committed before the answer`,
  target: SCALE_TARGET,
  upstream: true,
  request: (key) => ({
    method: 'POST',
    path: `/api/v1/tools/${METERED_TOOL}`,
    headers: headers(key),
    body: '{"q":"x"}',
  }),
  check(body) {
    const b = body as {
      status?: unknown;
      results?: unknown;
      metadata?: { fair_use?: unknown; tokens_charged?: unknown };
    } | null;
    if (b?.status !== 'ok') return `status is ${JSON.stringify(b?.status)}, not "ok"`;
    if (!Array.isArray(b.results) || b.results.length !== RECORDS_PER_CALL)
      return `results is not the upstream's ${RECORDS_PER_CALL} results`;
    if (b.metadata?.fair_use === undefined) return 'metadata.fair_use is missing (the tool is not metered)';
    if (b.metadata.tokens_charged !== 0) return 'metadata.tokens_charged is not 0';
    return null;
  },
};

/** In the order they run and the tables list them. */
export const SCALE_CALLS: readonly ScaleCall[] = [SCALE_GET_ACCOUNT, SCALE_METERED];
