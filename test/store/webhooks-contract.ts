/**
 * The webhooks' part of the Store contract, run on every backend: events recorded in the
 * transactions of the changes that cause them (and never by a refused one), fan-out to the
 * endpoints that want them, leases that hand a delivery to one caller at a time, attempts settled
 * only under their lease, replay and pruning.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Account } from '../../src/domain/accounts.js';
import { incrementsFor } from '../../src/domain/fair-use.js';
import { newId } from '../../src/domain/ids.js';
import { DEFAULT_PLANS, type Plan } from '../../src/domain/plans.js';
import type { WebhookEndpoint } from '../../src/domain/webhooks.js';
import type { Store, UsageCommit } from '../../src/store/store.js';
import { accountRecord } from '../helpers.js';
import type { StoreFixture } from './contract-fixtures.js';

const T = Date.UTC(2026, 3, 15, 13, 55, 29) / 1000;
/** enrich records: 10 per 5 h, 100 per week; requests 10 per 5 h. */
const SMALL: Plan = {
  id: 'small',
  unlimited: false,
  limits: {
    enrich: { records: { '5h': 10, '1w': 100 }, requests: { '5h': 10 } },
    search: { records: { '5h': 10, '1w': 100 }, requests: { '5h': 10 } },
  },
};

let ms = T * 1000;
const id = (kind: 'acc' | 'key' | 'whe' | 'whd' | 'led') => newId(kind, ++ms);

function account(over: Partial<Account> = {}): Account {
  return accountRecord(T, { id: id('acc'), planId: SMALL.id, ...over });
}

function endpoint(over: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id: id('whe'),
    url: 'https://hooks.example.com/toolgate',
    accountId: null,
    events: ['fair_use.threshold', 'tokens.low_balance', 'tokens.depleted', 'key.created', 'key.revoked'],
    thresholds: [80, 100],
    createdAt: T,
    ...over,
  };
}

const consume = (
  accountId: string,
  records: number,
  thresholds: number[] | undefined,
  now = T,
): UsageCommit => {
  const c: UsageCommit = {
    accountId,
    increments: incrementsFor(SMALL.limits, 'enrich', { records, requests: 1 }),
    now,
    render: () => ({}),
  };
  if (thresholds) c.thresholds = thresholds;
  return c;
};

export function webhooksContract(name: string, open: () => Promise<StoreFixture>): void {
  describe(`${name}: webhooks`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await open());
      await store.migrate([...DEFAULT_PLANS, SMALL], T);
    });
    afterEach(() => cleanup());

    const events = async () => store.webhooks.events({ limit: 500 });

    it('records a threshold event once per crossing, from the use the consumption wrote', async () => {
      const a = account();
      await store.accounts.create(a);
      // 10 records per 5 h: 7 (70%), 8 (80% crossed), 9, 10 (100% crossed), then refused.
      for (const records of [7, 1, 1, 1]) {
        expect((await store.usage.commit(consume(a.id, records, [80, 100]))).kind).toBe('committed');
      }
      expect((await store.usage.commit(consume(a.id, 1, [80, 100]))).kind).toBe('exceeded');
      const got = await events();
      expect(got.map((e) => [e.type, e.data.window, e.data.unit, e.data.threshold, e.data.used])).toEqual([
        ['fair_use.threshold', '5h', 'records', 80, 8],
        ['fair_use.threshold', '5h', 'records', 100, 10],
      ]);
      expect(got[0]!.data).toMatchObject({
        account_id: a.id,
        category: 'enrich',
        limit: 10,
        remaining: 2,
        resets_at: '2026-04-15T18:55:29Z',
      });
    });

    it('fires again in the next run of a window, and not without thresholds', async () => {
      const a = account();
      await store.accounts.create(a);
      await store.usage.commit(consume(a.id, 9, [80]));
      await store.usage.commit(consume(a.id, 9, undefined, T + 18_000)); // a new run, nobody asking
      await store.usage.commit(consume(a.id, 9, [80], T + 36_000)); // the run after: fires again
      const got = await events();
      expect(got.map((e) => [e.data.window, e.data.used, e.at])).toEqual([
        ['5h', 9, T],
        ['5h', 9, T + 36_000],
      ]);
    });

    it('records balance events once per crossing down, armed again when the balance rises', async () => {
      const a = account({ planId: 'free' });
      await store.accounts.create(a);
      await store.accounts.update(a.id, { lowBalance: 50 }, T);
      const ledger = (kind: 'grant' | 'charge', amount: number) =>
        store.ledger.append({
          id: id('led'),
          accountId: a.id,
          kind,
          amount,
          reason: null,
          idempotencyKey: null,
          requestHash: '',
          createdAt: T,
        });
      await ledger('grant', 100);
      await ledger('charge', 40); // 60: above
      await ledger('charge', 20); // 40: crossed down
      await ledger('charge', 10); // 30: still below, nothing
      expect((await ledger('charge', 31)).kind).toBe('insufficient'); // refused: nothing
      await ledger('grant', 70); // 100: armed again
      await ledger('charge', 100); // 0: low balance and depleted
      expect((await events()).map((e) => [e.type, e.data.balance])).toEqual([
        ['tokens.low_balance', 40],
        ['tokens.low_balance', 0],
        ['tokens.depleted', 0],
      ]);
    });

    it('records key and status events only for changes that happened', async () => {
      const a = account();
      await store.accounts.create(a);
      const key = {
        id: id('key'),
        accountId: a.id,
        name: 'ci',
        hint: 'x',
        createdAt: T,
        revokedAt: null,
        lastUsedAt: null,
      };
      await store.keys.create(key, 'digest-1');
      await store.keys.revoke(key.id, T + 1);
      await store.keys.revoke(key.id, T + 2); // already revoked: nothing
      await store.accounts.update(a.id, { status: 'suspended' }, T + 3);
      await store.accounts.update(a.id, { status: 'suspended' }, T + 4); // no change: nothing
      await store.accounts.update(a.id, { name: 'Other' }, T + 5);
      expect((await events()).map((e) => [e.type, e.data])).toEqual([
        ['key.created', { account_id: a.id, key_id: key.id, name: 'ci' }],
        ['key.revoked', { account_id: a.id, key_id: key.id }],
        ['account.status_changed', { account_id: a.id, status: 'suspended', previous_status: 'active' }],
      ]);
    });

    it('fans events out to the endpoints that want them, once', async () => {
      const a = account();
      const b = account();
      await store.accounts.create(a);
      await store.accounts.create(b);
      const all = endpoint({ thresholds: [80] });
      const onlyB = endpoint({ accountId: b.id, events: ['fair_use.threshold'], thresholds: [100] });
      await store.webhooks.addEndpoint(all, 'whsec_c2VjcmV0');
      await store.webhooks.addEndpoint(onlyB, 'whsec_b3RoZXI=');
      await store.usage.commit(consume(a.id, 10, [80, 100])); // a: 80 and 100
      await store.usage.commit(consume(b.id, 10, [80, 100])); // b: 80 and 100
      expect(await store.webhooks.fanOut(T, () => id('whd'), 100)).toBe(4);
      expect(await store.webhooks.fanOut(T, () => id('whd'), 100)).toBe(0);
      const toAll = await store.webhooks.listDeliveries(all.id, { limit: 50 });
      const toB = await store.webhooks.listDeliveries(onlyB.id, { limit: 50 });
      expect(toAll.map((d) => d.type)).toEqual(['fair_use.threshold', 'fair_use.threshold']);
      expect(toB).toHaveLength(1);
      expect(toB[0]).toMatchObject({
        status: 'pending',
        attempts: 0,
        nextAttemptAt: T,
        lastStatusCode: null,
      });
    });

    it('fans out to an endpoint only the events committed after it, in the same second too', async () => {
      const a = account();
      await store.accounts.create(a);
      const first = endpoint({ events: ['fair_use.threshold'], thresholds: [80, 100] });
      await store.webhooks.addEndpoint(first, 'whsec_c2VjcmV0');
      await store.usage.commit(consume(a.id, 8, [80, 100])); // 80%, waiting for the fan-out
      // Added in the same second as that event, before any fan-out ran: it must not hear it.
      const later = endpoint({ events: ['fair_use.threshold'], thresholds: [80, 100] });
      await store.webhooks.addEndpoint(later, 'whsec_b3RoZXI=');
      await store.usage.commit(consume(a.id, 2, [80, 100])); // 100%, after both
      await store.webhooks.fanOut(T, () => id('whd'), 100);
      const toFirst = await store.webhooks.listDeliveries(first.id, { limit: 50 });
      const toLater = await store.webhooks.listDeliveries(later.id, { limit: 50 });
      expect(toFirst).toHaveLength(2);
      expect(toLater).toHaveLength(1);
      const events = await store.webhooks.events({ limit: 10 });
      const hundred = events.find((e) => (e.data as { threshold?: number }).threshold === 100);
      expect(toLater[0]!.eventId).toBe(hundred?.id);
    });

    it('leases a due delivery to one caller at a time, and settles it only under that lease', async () => {
      const a = account();
      await store.accounts.create(a);
      const ep = endpoint();
      await store.webhooks.addEndpoint(ep, 'whsec_c2VjcmV0');
      await store.usage.commit(consume(a.id, 8, [80]));
      await store.webhooks.fanOut(T, () => id('whd'), 100);
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.webhooks.claim(T, `lease-${i}`, T + 30, 10)),
      );
      const won = claims.flatMap((c, i) => c.map((d) => ({ lease: `lease-${i}`, d })));
      expect(won).toHaveLength(1);
      const { lease, d } = won[0]!;
      expect(d.url).toBe(ep.url);
      expect(d.secret).toBe('whsec_c2VjcmV0');
      expect(JSON.parse(d.body)).toMatchObject({
        type: 'fair_use.threshold',
        timestamp: '2026-04-15T13:55:29Z',
      });
      // Leased: nobody else gets it before the lease runs out; then anyone may.
      expect(await store.webhooks.claim(T + 29, 'other', T + 60, 10)).toEqual([]);
      const retry = {
        status: 'pending' as const,
        nextAttemptAt: T + 5,
        statusCode: 500,
        error: 'answered 500',
      };
      expect(await store.webhooks.settle(d.delivery.id, 'not-mine', retry, T + 1)).toBe(false);
      expect(await store.webhooks.settle(d.delivery.id, lease, retry, T + 1)).toBe(true);
      expect(await store.webhooks.claim(T + 4, 'other', T + 60, 10)).toEqual([]);
      const again = await store.webhooks.claim(T + 5, 'other', T + 60, 10);
      expect(again.map((x) => x.delivery)).toEqual([
        expect.objectContaining({
          id: d.delivery.id,
          attempts: 1,
          lastStatusCode: 500,
          lastError: 'answered 500',
        }),
      ]);
      // A lease that ran out: taken over, and the first holder can no longer settle.
      const taken = await store.webhooks.claim(T + 61, 'third', T + 90, 10);
      expect(taken).toHaveLength(1);
      const done = { status: 'delivered' as const, nextAttemptAt: null, statusCode: 204, error: null };
      expect(await store.webhooks.settle(d.delivery.id, 'other', done, T + 62)).toBe(false);
      expect(await store.webhooks.settle(d.delivery.id, 'third', done, T + 62)).toBe(true);
      expect(await store.webhooks.getDelivery(d.delivery.id)).toMatchObject({
        status: 'delivered',
        attempts: 2,
      });
      expect(await store.webhooks.claim(T + 1_000, 'x', T + 2_000, 10)).toEqual([]);

      // Replay: pending again, due now, a fresh schedule.
      expect(await store.webhooks.replay(d.delivery.id, T + 100)).toMatchObject({
        status: 'pending',
        attempts: 0,
        nextAttemptAt: T + 100,
      });
      expect(await store.webhooks.claim(T + 100, 'y', T + 130, 10)).toHaveLength(1);
      expect(await store.webhooks.replay('whd_nothing', T)).toBeUndefined();
    });

    it('records a test event for one endpoint with its delivery, leased to the caller, never fanned out', async () => {
      // Subscribed to nothing a test event is: it goes to this endpoint all the same, and only to it.
      const ep = endpoint({ events: ['key.created'] });
      const other = endpoint();
      await store.webhooks.addEndpoint(ep, 'whsec_c2VjcmV0');
      await store.webhooks.addEndpoint(other, 'whsec_b3RoZXI=');
      const event = {
        id: newId('msg', ++ms),
        type: 'webhook.test' as const,
        accountId: null,
        at: T,
        data: { endpoint_id: ep.id },
      };
      const deliveryId = id('whd');
      const due = await store.webhooks.addLeasedDelivery(
        event,
        { id: deliveryId, endpointId: ep.id },
        { token: 'tester', until: T + 30 },
        {
          id: newId('aud', ++ms),
          at: T,
          actor: 'cli:ops',
          action: 'webhook.test',
          accountId: null,
          targetId: ep.id,
          details: {},
        },
      );
      expect(due).toMatchObject({ url: ep.url, secret: 'whsec_c2VjcmV0', eventAt: T });
      expect(JSON.parse(due!.body)).toEqual({
        type: 'webhook.test',
        timestamp: '2026-04-15T13:55:29Z',
        data: { endpoint_id: ep.id },
      });
      expect(due!.delivery).toMatchObject({
        id: deliveryId,
        type: 'webhook.test',
        status: 'pending',
        attempts: 0,
      });
      // Leased to the caller: no dispatcher takes it; and nothing to fan out to the other endpoint.
      expect(await store.webhooks.claim(T, 'dispatcher', T + 30, 10)).toEqual([]);
      expect(await store.webhooks.fanOut(T, () => id('whd'), 100)).toBe(0);
      expect(await store.webhooks.listDeliveries(other.id, { limit: 10 })).toEqual([]);
      const done = { status: 'delivered' as const, nextAttemptAt: null, statusCode: 204, error: null };
      expect(await store.webhooks.settle(deliveryId, 'tester', done, T + 1)).toBe(true);
      expect(await store.webhooks.listDeliveries(ep.id, { limit: 10 })).toEqual([
        expect.objectContaining({ id: deliveryId, status: 'delivered', attempts: 1, lastStatusCode: 204 }),
      ]);
      expect((await store.audit.list({ limit: 10 })).map((e) => e.action)).toContain('webhook.test');
      // No such endpoint: nothing recorded.
      const none = await store.webhooks.addLeasedDelivery(
        { ...event, id: newId('msg', ++ms) },
        { id: id('whd'), endpointId: 'whe_nothing' },
        { token: 'tester', until: T + 30 },
      );
      expect(none).toBeUndefined();
      expect((await events()).map((e) => e.type)).toEqual(['webhook.test']);
    });

    it('removes an endpoint with its deliveries, and prunes finished deliveries by age', async () => {
      const a = account();
      await store.accounts.create(a);
      const keep = endpoint();
      const gone = endpoint();
      await store.webhooks.addEndpoint(keep, 'whsec_c2VjcmV0');
      await store.webhooks.addEndpoint(gone, 'whsec_c2VjcmV0');
      await store.usage.commit(consume(a.id, 8, [80]));
      await store.webhooks.fanOut(T, () => id('whd'), 100);
      expect((await store.webhooks.removeEndpoint(gone.id))?.id).toBe(gone.id);
      expect(await store.webhooks.removeEndpoint(gone.id)).toBeUndefined();
      expect(await store.webhooks.listEndpoints()).toEqual([keep]);
      const [due] = await store.webhooks.claim(T, 'l', T + 30, 10);
      await store.webhooks.settle(
        due!.delivery.id,
        'l',
        { status: 'failed', nextAttemptAt: null, statusCode: 410, error: 'answered 410' },
        T + 1,
      );
      expect(await store.webhooks.prune(T)).toBe(0);
      expect(await store.webhooks.prune(T + 2)).toBe(1);
      expect(await store.webhooks.listDeliveries(keep.id, { limit: 10 })).toEqual([]);
      expect(await events()).toEqual([]);
    });
  });
}
