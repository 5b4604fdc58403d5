/**
 * 300 concurrent calls of a metered catalogue tool on a fair-use limit of 100, over a real socket
 * to a real upstream: exactly 100 are granted, every answer with data is a committed one, and the
 * upstream is not called for the calls beyond the requests left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../calls.js';
import { type AppHarness, accountWithKey, limits, scratchApp } from '../helpers.js';
import { sendJson, startTestUpstream, type TestUpstream } from '../upstream/test-upstream.js';

describe('300 concurrent calls on a fair-use limit of 100', () => {
  let upstream: TestUpstream;
  let h: AppHarness;
  let url: string;
  beforeAll(async () => {
    upstream = await startTestUpstream();
    // Slow enough that the calls overlap: every one is in flight before the first is answered.
    upstream.on('search', (call, res) => {
      const { n } = call.body as { n: number };
      return new Promise<void>((resolve) =>
        setTimeout(
          () => resolve(sendJson(res, 200, { results: Array.from({ length: n }, (_, i) => i) })),
          30,
        ),
      );
    });
    h = await scratchApp({ catalogue: {} });
    const imported = await h.services.catalogue.import({
      tools: [
        {
          name: 'search_things',
          upstream: { url: `${upstream.url}/search` },
          metering: { category: 'search', tokens_per_record: 1 },
        },
      ],
    });
    expect(imported.ok).toBe(true);
    // 100 search requests per 5h; records and tokens far from their limits.
    expect(
      (await h.services.plans.put('hundred', { limits: limits(10_000, 10_000, 10_000, 10_000, 10_000, 100) }))
        .ok,
    ).toBe(true);
    url = await h.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await h.close();
    await upstream.close();
  });

  it('grants exactly 100, answers data only for committed calls, and spares the upstream the rest', async () => {
    const { key, accountId } = await accountWithKey(h.services, { plan: 'hundred', tokens: 100_000 });
    const calls = Array.from({ length: 300 }, (_, i) =>
      callTool(url, key, 'search_things', { n: (i % 5) + 1 }).then((res) => ({
        status: res.status,
        body: res.json() as Record<string, unknown>,
      })),
    );
    const answers = await Promise.all(calls);

    const granted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    expect(granted).toHaveLength(100);
    expect(new Set(refused.map((a) => `${a.status} ${String(a.body.code)}`))).toEqual(
      new Set(['429 fair_use_exceeded']),
    );
    // No refused answer carries data; every answer with data is one the store counted.
    for (const a of refused) expect(a.body.results).toBeUndefined();
    const records = granted.reduce((sum, a) => sum + (a.body.results as unknown[]).length, 0);
    const account = await h.services.accounts.get(accountId);
    if (!account.ok) throw new Error('no account');
    expect(account.value.fair_use.search.requests['5h'].used).toBe(100);
    expect(account.value.fair_use.search.records['5h'].used).toBe(records);
    expect(account.value.token_balance).toBe(100_000 - records);

    // At most 100 + the calls in flight at once; here, holding requests in flight, no more than 100.
    expect(upstream.calls.length).toBeLessThanOrEqual(100 + upstream.maxInFlight);
    expect(upstream.calls.length).toBe(100);
  });
});
