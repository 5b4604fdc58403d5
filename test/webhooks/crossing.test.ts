/**
 * Exactly one event per crossing under concurrency on SQLite: 300 consumptions at once, committed
 * in group commits, cross 80% and 100% of each window once; every other consumption records none.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createServices } from '../../src/service/index.js';
import { WebhookInterest } from '../../src/webhooks/interest.js';
import { accountOnPlan, type Harness, scratchServices } from '../helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await scratchServices();
});
afterEach(() => h.close());

it('300 concurrent consumptions crossing 80% and 100% record exactly one event each', async () => {
  const interest = new WebhookInterest(h.store, { warn() {} });
  const services = createServices({
    ...h.deps,
    webhookInterest: interest,
    webhookAllowPrivate: true,
  });
  const added = await services.webhooks.add({ url: 'http://127.0.0.1:9/hooks', thresholds: [80, 100] });
  expect(added.ok).toBe(true);
  await interest.refresh();
  const accountId = await accountOnPlan(services, { records5h: 300, records1w: 600, requests5h: 300 });
  const answers = await Promise.all(
    Array.from({ length: 300 }, () => services.usage.record(accountId, { category: 'enrich', records: 1 })),
  );
  expect(answers.filter((a) => !a.ok)).toEqual([]);
  const events = await h.store.webhooks.events({ limit: 100 });
  // The weekly window (600) reaches 50%: nothing.
  expect(
    events.map((e) => `${e.data.unit}.${e.data.window}@${e.data.threshold}:${e.data.used}`).sort(),
  ).toEqual(['records.5h@100:300', 'records.5h@80:240', 'requests.5h@100:300', 'requests.5h@80:240']);
});
