/** The audit trail part of the Store contract (store.audit, and the entries every change writes), run on every backend. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Account } from '../../src/domain/accounts.js';
import type { AuditAction, AuditDetails, AuditEntry } from '../../src/domain/audit.js';
import { type Amounts, incrementsFor } from '../../src/domain/fair-use.js';
import type { Store, UsageCommit } from '../../src/store/store.js';
import {
  account,
  apiKey,
  audit,
  eachMigratedStore,
  id,
  ledger,
  type StoreFixture,
  T,
  TINY,
  user,
} from './contract-fixtures.js';

export function auditContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} store contract`, () => {
    let store: Store;
    eachMigratedStore(makeStore, (s) => {
      store = s;
    });

    describe('the audit trail', () => {
      let acc: Account;
      beforeEach(async () => {
        acc = account({ planId: 'tiny' });
        await store.accounts.create(acc);
      });
      const trail = (accountId?: string) =>
        store.audit.list({ limit: 100, ...(accountId === undefined ? {} : { accountId }) });
      const consume = (
        accountId: string,
        amounts: Amounts,
        entry?: AuditEntry,
        extra: Partial<UsageCommit> = {},
      ) =>
        store.usage.commit(
          {
            accountId,
            increments: incrementsFor(TINY.limits, 'enrich', amounts),
            now: T,
            render: () => null,
            ...extra,
          },
          entry,
        );

      it('writes the entry of every kind of action with it, and gives each back as written, in id order', async () => {
        const a = account({ planId: 'tiny' });
        const k = apiKey(a.id);
        const u = user(a.id, 'ann@example.com');
        const grant = ledger(a.id, 'grant', 10);
        const steps: Array<[AuditEntry, (e: AuditEntry) => Promise<unknown>]> = [
          [
            audit('account.create', a.id, null, { name: 'Acme', plan: 'tiny', unlimited: null, tokens: 5 }),
            (e) => store.accounts.create(a, ledger(a.id, 'grant', 5), e),
          ],
          [
            audit('account.update', a.id, null, { name: 'Globex' }),
            (e) => store.accounts.update(a.id, { name: 'Globex' }, T + 1, e),
          ],
          [audit('key.create', a.id, k.id, { name: 'ci' }), (e) => store.keys.create(k, 'digest-audited', e)],
          [audit('key.revoke', a.id, k.id), (e) => store.keys.revoke(k.id, T + 2, e)],
          [audit('user.add', a.id, u.id, { email: u.email, role: 'member' }), (e) => store.users.add(u, e)],
          [audit('user.remove', a.id, u.id, { email: u.email }), (e) => store.users.remove(u.id, e)],
          [
            audit('tokens.grant', a.id, grant.id, { amount: 10, reason: null, idempotency_key: null }),
            (e) => store.ledger.append(grant, e),
          ],
          [
            audit('usage.record', a.id, null, { category: 'enrich', records: 2, requests: 1 }),
            (e) => consume(a.id, { records: 2, requests: 1 }, e),
          ],
          [
            // Details keep nesting, nulls and any text as they were given.
            audit('plan.put', null, 'tiny', {
              unlimited: false,
              limits: TINY.limits as unknown as AuditDetails,
              note: 'Zoë ✓ "quoted"',
            }),
            (e) => store.plans.put(TINY, T + 3, e),
          ],
        ];
        for (const [entry, act] of steps) await act(entry);
        const written = steps.map(([entry]) => entry);

        expect(await trail()).toEqual(written);
        expect(await trail(a.id)).toEqual(written.filter((e) => e.accountId === a.id));
        expect(await trail(acc.id)).toEqual([]);
        // And the actions themselves were kept.
        expect(await store.accounts.get(a.id)).toMatchObject({ name: 'Globex', tokenBalance: 15 });
        expect((await store.keys.get(k.id))?.revokedAt).toBe(T + 2);
        expect((await store.accounts.snapshot(a.id))?.windows).toHaveLength(3);
      });

      it('writes no entry for an action that did not take effect: refused, replayed, already done, or unknown', async () => {
        const ghost = id('acc');
        const k = apiKey(acc.id);
        await store.keys.create(k, 'digest-r');
        await store.keys.revoke(k.id, T);
        const u = user(acc.id, 'dup@example.com');
        await store.users.add(u);
        await store.ledger.append(ledger(acc.id, 'grant', 3, { idempotencyKey: 'g-1' }));
        await consume(acc.id, { records: 1, requests: 1 }, undefined, {
          idempotency: { key: 'u-1', requestHash: 'h1' },
        });
        const none = (action: AuditAction, target: string | null = null) => audit(action, acc.id, target);

        expect(await store.accounts.update(ghost, { name: 'X' }, T, none('account.update'))).toBeUndefined();
        expect(await store.keys.revoke(k.id, T + 5, none('key.revoke', k.id))).toMatchObject({
          revokedAt: T,
        });
        expect(await store.keys.revoke(id('key'), T, none('key.revoke'))).toBeUndefined();
        expect(await store.users.add(user(acc.id, 'dup@example.com'), none('user.add'))).toBe('duplicate');
        expect(await store.users.remove(id('usr'), none('user.remove'))).toBeUndefined();

        const ledgerOutcomes = [
          await store.ledger.append(ledger(acc.id, 'charge', 4), none('tokens.charge')),
          await store.ledger.append(
            ledger(acc.id, 'grant', 3, { idempotencyKey: 'g-1' }),
            none('tokens.grant'),
          ),
          await store.ledger.append(
            ledger(acc.id, 'grant', 3, { idempotencyKey: 'g-1', requestHash: 'other' }),
            none('tokens.grant'),
          ),
          await store.ledger.append(ledger(ghost, 'grant', 1), none('tokens.grant')),
        ];
        expect(ledgerOutcomes.map((o) => o.kind)).toEqual([
          'insufficient',
          'replayed',
          'idempotency_conflict',
          'not_found',
        ]);

        const usageOutcomes = [
          await consume(acc.id, { records: 21, requests: 1 }, none('usage.record')),
          await consume(acc.id, { records: 1, requests: 1 }, none('usage.record'), {
            idempotency: { key: 'u-1', requestHash: 'h1' },
          }),
          await consume(acc.id, { records: 2, requests: 1 }, none('usage.record'), {
            idempotency: { key: 'u-1', requestHash: 'h2' },
          }),
          await consume(acc.id, { records: 1, requests: 1 }, none('usage.record'), {
            charge: { entryId: id('led'), amount: 99, reason: null },
          }),
          await consume(ghost, { records: 1, requests: 1 }, none('usage.record')),
        ];
        expect(usageOutcomes.map((o) => o.kind)).toEqual([
          'exceeded',
          'replayed',
          'idempotency_conflict',
          'insufficient',
          'not_found',
        ]);

        expect(await trail()).toEqual([]);
      });

      it('keeps neither the action nor its entry when the entry cannot be written (one transaction)', async () => {
        const k1 = apiKey(acc.id);
        const first = audit('key.create', acc.id, k1.id);
        await store.keys.create(k1, 'digest-1', first);
        // The same entry id again: the entry's insert fails, and must take its action down with it.
        const clash = (action: AuditAction, accountId: string | null = acc.id): AuditEntry => ({
          ...audit(action, accountId, null),
          id: first.id,
        });
        const b = account();
        const k2 = apiKey(acc.id);
        const before = await store.accounts.get(acc.id);
        const windowsBefore = (await store.accounts.snapshot(acc.id))?.windows;

        await expect(
          store.accounts.create(b, ledger(b.id, 'grant', 5), clash('account.create', b.id)),
        ).rejects.toThrow();
        await expect(
          store.accounts.update(acc.id, { name: 'Lost' }, T + 1, clash('account.update')),
        ).rejects.toThrow();
        await expect(store.keys.create(k2, 'digest-2', clash('key.create'))).rejects.toThrow();
        await expect(store.keys.revoke(k1.id, T + 1, clash('key.revoke'))).rejects.toThrow();
        await expect(store.users.add(user(acc.id, 'eve@example.com'), clash('user.add'))).rejects.toThrow();
        await expect(
          store.ledger.append(ledger(acc.id, 'grant', 7), clash('tokens.grant')),
        ).rejects.toThrow();
        await expect(consume(acc.id, { records: 1, requests: 1 }, clash('usage.record'))).rejects.toThrow();
        await expect(
          store.plans.put({ ...TINY, unlimited: true }, T + 1, clash('plan.put', null)),
        ).rejects.toThrow();

        expect(await store.accounts.get(b.id)).toBeUndefined();
        expect(await store.ledger.list(b.id, { limit: 10 })).toEqual([]);
        expect(await store.accounts.get(acc.id)).toEqual(before);
        expect(await store.keys.get(k2.id)).toBeUndefined();
        expect(await store.keys.findActive('digest-1')).toEqual({ keyId: k1.id, accountId: acc.id });
        expect(await store.users.list(acc.id)).toEqual([]);
        expect(await store.ledger.list(acc.id, { limit: 10 })).toEqual([]);
        expect((await store.accounts.snapshot(acc.id))?.windows).toEqual(windowsBefore);
        expect(await store.plans.get('tiny')).toEqual(TINY);
        expect(await trail()).toEqual([first]);

        // removeUser too: the user stays.
        const u = user(acc.id, 'kept@example.com');
        await store.users.add(u);
        await expect(store.users.remove(u.id, clash('user.remove'))).rejects.toThrow();
        expect(await store.users.get(u.id)).toEqual(u);
      });

      it('lists by account, a page at a time after the last id seen; all accounts and plans without one', async () => {
        const other = account();
        await store.accounts.create(other);
        const mine: AuditEntry[] = [];
        const all: AuditEntry[] = [];
        for (let i = 0; i < 5; i++) {
          const e = audit('account.update', acc.id, null, { name: `A${i}` });
          await store.accounts.update(acc.id, { name: `A${i}` }, T + i, e);
          mine.push(e);
          all.push(e);
          const o = audit('account.update', other.id, null, { name: `B${i}` });
          await store.accounts.update(other.id, { name: `B${i}` }, T + i, o);
          all.push(o);
        }
        const plan = audit('plan.put', null, 'tiny', { unlimited: false });
        await store.plans.put(TINY, T + 9, plan);
        all.push(plan);

        const page1 = await store.audit.list({ accountId: acc.id, limit: 2 });
        expect(page1).toEqual(mine.slice(0, 2));
        const page2 = await store.audit.list({ accountId: acc.id, limit: 2, after: page1[1]!.id });
        expect(page2).toEqual(mine.slice(2, 4));
        const page3 = await store.audit.list({ accountId: acc.id, limit: 2, after: page2[1]!.id });
        expect(page3).toEqual(mine.slice(4));
        expect(await store.audit.list({ accountId: acc.id, limit: 2, after: mine[4]!.id })).toEqual([]);

        expect(await store.audit.list({ limit: 100 })).toEqual(all);
        const firstThree = await store.audit.list({ limit: 3 });
        expect(firstThree).toEqual(all.slice(0, 3));
        expect(await store.audit.list({ limit: 100, after: firstThree[2]!.id })).toEqual(all.slice(3));
        expect(await store.audit.list({ accountId: id('acc'), limit: 10 })).toEqual([]);
      });
    });
  });
}
