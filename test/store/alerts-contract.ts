/**
 * The customer alerts' part of the Store contract, run on every backend: the webhooks' fan-out
 * queues a mail per alert event (80% and 100% of a window, low balance, depleted) and owner who
 * wants them, once; a mail is leased to one caller at a time and settled only under its lease; a
 * mail whose owner turned the alerts off, is no owner any more or is gone, or whose crossing is
 * stale, is skipped at the claim; each user's choice is kept and audited only when it changes.
 */
import { describe, expect, it } from 'vitest';
import { incrementsFor } from '../../src/domain/fair-use.js';
import { newId } from '../../src/domain/ids.js';
import type { User } from '../../src/domain/users.js';
import type { Store } from '../../src/store/store.js';
import {
  account,
  apiKey,
  audit,
  eachMigratedStore,
  ledger,
  type StoreFixture,
  T,
  TINY,
  user,
} from './contract-fixtures.js';

const owner = (accountId: string, email: string): User => ({ ...user(accountId, email), role: 'owner' });
const DAY = 86_400;

export function alertsContract(name: string, open: () => Promise<StoreFixture>): void {
  describe(`${name}: customer alerts`, () => {
    let store: Store;
    eachMigratedStore(open, (s) => {
      store = s;
    });

    const fanOut = () => store.webhooks.fanOut(T, () => newId('whd'), 100);
    const mails = () => store.alerts.list({ limit: 100 });
    const claim = (token: string, now = T, staleBefore = T - DAY) =>
      store.alerts.claim(now, token, now + 60, 100, staleBefore);

    /** An account on TINY (enrich records: 20 per 5 h) with these users. */
    async function accountWith(...users: ((accountId: string) => User)[]) {
      const a = account({ planId: TINY.id, name: 'Acme & Co' });
      await store.accounts.create(a);
      const made: User[] = [];
      for (const u of users) {
        const one = u(a.id);
        await store.users.add(one);
        made.push(one);
      }
      return { a, users: made };
    }

    /** Records on the account's 5 h window, watching 50, 80 and 100 (an endpoint's 50 among them). */
    const consume = (accountId: string, records: number) =>
      store.usage.commit({
        accountId,
        increments: incrementsFor(TINY.limits, 'enrich', { records, requests: 0 }),
        now: T,
        thresholds: [50, 80, 100],
        render: () => ({}),
      });

    it('queues a mail per alert event and owner who wants them, once, at the fan-out', async () => {
      const { a, users } = await accountWith(
        (id) => owner(id, 'ann@example.com'),
        (id) => owner(id, 'off@example.com'),
        (id) => user(id, 'member@example.com'),
      );
      const other = await accountWith((id) => owner(id, 'bob@example.com'));
      const [ann, off] = users as [User, User];
      expect(await store.alerts.setMailsOn(off.id, false)).toBe(true);
      for (const records of [10, 6, 4]) expect((await consume(a.id, records)).kind).toBe('committed');
      await store.accounts.update(a.id, { lowBalance: 50 }, T);
      await store.ledger.append(ledger(a.id, 'grant', 100));
      await store.ledger.append(ledger(a.id, 'charge', 60)); // 40: low
      await store.ledger.append(ledger(a.id, 'charge', 40)); // 0: depleted
      await store.keys.create(apiKey(a.id), 'digest-alerts'); // key.created: no mail
      await store.ledger.append(ledger(other.a.id, 'grant', 5));

      expect(await fanOut()).toBe(6);
      const queued = await mails();
      expect(queued.map((m) => [m.type, m.userId, m.accountId, m.status, m.attempts])).toEqual([
        ['fair_use.threshold', ann.id, a.id, 'pending', 0],
        ['fair_use.threshold', ann.id, a.id, 'pending', 0],
        ['tokens.low_balance', ann.id, a.id, 'pending', 0],
        ['tokens.depleted', ann.id, a.id, 'pending', 0],
      ]);
      expect(await fanOut()).toBe(0);
      expect(await mails()).toHaveLength(4);
    });

    it('leases a mail to one caller at a time, with what the mail is written from', async () => {
      const { a } = await accountWith((id) => owner(id, 'ann@example.com'));
      await consume(a.id, 16);
      await fanOut();
      const [first] = await claim('one');
      expect(first).toMatchObject({
        attempts: 0,
        alert: {
          to: 'ann@example.com',
          accountId: a.id,
          accountName: 'Acme & Co',
          at: T,
          crossing: {
            type: 'fair_use.threshold',
            category: 'enrich',
            unit: 'records',
            window: '5h',
            threshold: 80,
            limit: 20,
            used: 16,
            remaining: 4,
            resetsAt: '2026-04-15T18:55:29Z',
          },
        },
      });
      expect(await claim('two')).toEqual([]);
      // The lease runs out: another caller takes it, and the first can no longer settle it.
      const [again] = await claim('two', T + 61);
      expect(again?.alert.id).toBe(first!.alert.id);
      const sent = { status: 'sent', nextAttemptAt: null, error: null } as const;
      expect(await store.alerts.settle(first!.alert.id, 'one', sent, T + 62)).toBe(false);
      const retry = { status: 'pending', nextAttemptAt: T + 200, error: 'mail server down' } as const;
      expect(await store.alerts.settle(first!.alert.id, 'two', retry, T + 62)).toBe(true);
      expect(await claim('three', T + 199)).toEqual([]);
      const [third] = await claim('three', T + 200);
      expect(third).toMatchObject({ attempts: 1, alert: { id: first!.alert.id } });
      expect(await store.alerts.settle(first!.alert.id, 'three', sent, T + 201)).toBe(true);
      expect(await claim('four', T + 10_000)).toEqual([]);
      expect((await mails())[0]).toMatchObject({ status: 'sent', attempts: 2, lastError: null });
    });

    it('skips, at the claim, a mail whose owner turned alerts off, left the owners or the account', async () => {
      const { a, users } = await accountWith(
        (id) => owner(id, 'stays@example.com'),
        (id) => owner(id, 'turns-off@example.com'),
        (id) => owner(id, 'demoted@example.com'),
        (id) => owner(id, 'removed@example.com'),
      );
      await consume(a.id, 16);
      await fanOut();
      expect(await mails()).toHaveLength(4);
      const [, turnsOff, demoted, removed] = users as [User, User, User, User];
      await store.alerts.setMailsOn(turnsOff.id, false);
      await store.users.setRole(demoted.id, 'member');
      await store.users.remove(removed.id);
      const due = await claim('one');
      expect(due.map((d) => d.alert.to)).toEqual(['stays@example.com']);
      expect((await mails()).map((m) => m.status)).toEqual(['pending', 'skipped', 'skipped', 'skipped']);
    });

    it('skips a mail whose crossing is older than the stale mark', async () => {
      const { a } = await accountWith((id) => owner(id, 'ann@example.com'));
      await consume(a.id, 16);
      await fanOut();
      expect(await claim('one', T + DAY + 1, T + 1)).toEqual([]);
      expect((await mails()).map((m) => m.status)).toEqual(['skipped']);
    });

    it("keeps each user's choice, audited only when it changes", async () => {
      const { a, users } = await accountWith((id) => owner(id, 'ann@example.com'));
      const [ann] = users as [User];
      expect(await store.alerts.mailsOn(ann.id)).toBe(true);
      const entry = () => audit('user.alerts', a.id, ann.id, { alert_mails: false });
      expect(await store.alerts.setMailsOn(ann.id, false, entry())).toBe(true);
      expect(await store.alerts.setMailsOn(ann.id, false, entry())).toBe(true);
      expect(await store.alerts.mailsOn(ann.id)).toBe(false);
      const trail = await store.audit.list({ accountId: a.id, limit: 10 });
      expect(trail.filter((e) => e.action === 'user.alerts')).toHaveLength(1);
      expect(await store.alerts.setMailsOn(ann.id, true)).toBe(true);
      expect(await store.alerts.mailsOn(ann.id)).toBe(true);
      expect(await store.alerts.mailsOn('usr_nobody')).toBeUndefined();
      expect(await store.alerts.setMailsOn('usr_nobody', false)).toBe(false);
    });

    it('prunes alert mails with the webhook outbox, by age', async () => {
      const { a } = await accountWith((id) => owner(id, 'ann@example.com'));
      await consume(a.id, 16);
      await fanOut();
      await store.webhooks.prune(T);
      expect(await mails()).toHaveLength(1);
      await store.webhooks.prune(T + 1);
      expect(await mails()).toEqual([]);
    });
  });
}
