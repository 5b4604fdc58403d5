/** @module get_account: the read path (key digest lookup, account view) behind the tools pipeline. */
import { PEAK_RSS_MIB, type Scenario } from './scenario.js';

export const getAccount: Scenario = {
  id: 'get_account',
  title: 'get_account',
  description: 'POST /api/v1/tools/get_account, {} with a bearer API key, rotating over every seeded key',
  rotates: 'key',
  target: { sqlite: 0.9, postgres: 0.6 },
  p99Ms: 5,
  peakRssMib: PEAK_RSS_MIB,
  requests: (f) =>
    f.accounts.map((a) => ({
      method: 'POST',
      path: '/api/v1/tools/get_account',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: '{}',
    })),
  check(body, f) {
    const b = body as { status?: unknown; results?: { id?: unknown } } | null;
    if (b?.status !== 'ok') return `status is ${JSON.stringify(b?.status)}, not "ok"`;
    if (b.results?.id !== f.accounts[0]?.id) return 'results.id is not the account of the key';
    return null;
  },
};
