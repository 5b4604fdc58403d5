/** The token ledger part of the Store contract (store.ledger), run on every backend. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Account } from '../../src/domain/accounts.js';
import { type LedgerKind, MAX_BALANCE } from '../../src/domain/ledger.js';
import type { Store } from '../../src/store/store.js';
import { account, eachMigratedStore, id, ledger, type StoreFixture, T } from './contract-fixtures.js';

export function ledgerContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} store contract`, () => {
    let store: Store;
    eachMigratedStore(makeStore, (s) => {
      store = s;
    });

    describe('the token ledger', () => {
      let acc: Account;
      beforeEach(async () => {
        acc = account();
        await store.accounts.create(acc);
      });
      const balance = async () => (await store.accounts.get(acc.id))?.tokenBalance;

      it('moves the balance with grants, charges and adjustments, recording the balance after each', async () => {
        const steps: [LedgerKind, number, number, number][] = [
          ['grant', 100, 100, 100],
          ['charge', 30, -30, 70],
          ['adjust', -20, -20, 50],
          ['adjust', 5, 5, 55],
          ['charge', 55, -55, 0],
        ];
        for (const [kind, amount, delta, after] of steps) {
          const outcome = await store.ledger.append(ledger(acc.id, kind, amount));
          expect(outcome).toMatchObject({
            kind: 'applied',
            entry: { kind, amount, delta, balanceAfter: after },
          });
        }
        expect(await balance()).toBe(0);
        const all = await store.ledger.list(acc.id, { limit: 10 });
        expect(all.map((e) => e.balanceAfter)).toEqual([100, 70, 50, 55, 0]);
        const tail = await store.ledger.list(acc.id, { limit: 2, after: all[2]!.id });
        expect(tail).toEqual(all.slice(3));
      });

      it('refuses a charge that does not fit and changes nothing', async () => {
        await store.ledger.append(ledger(acc.id, 'grant', 10));
        expect(await store.ledger.append(ledger(acc.id, 'charge', 11))).toEqual({
          kind: 'insufficient',
          balance: 10,
        });
        expect(await store.ledger.append(ledger(acc.id, 'adjust', -11))).toEqual({
          kind: 'insufficient',
          balance: 10,
        });
        expect(await balance()).toBe(10);
        expect(await store.ledger.list(acc.id, { limit: 10 })).toHaveLength(1);
      });

      it('replays the first entry for the same idempotency key and request, counting it once', async () => {
        await store.ledger.append(ledger(acc.id, 'grant', 100));
        const first = await store.ledger.append(ledger(acc.id, 'charge', 60, { idempotencyKey: 'k1' }));
        expect(first.kind).toBe('applied');
        // The replay answers even though the charge would no longer fit.
        const again = await store.ledger.append(
          ledger(acc.id, 'charge', 60, { idempotencyKey: 'k1', createdAt: T + 30 }),
        );
        expect(again).toEqual({
          kind: 'replayed',
          entry: first.kind === 'applied' ? first.entry : undefined,
        });
        expect(await balance()).toBe(40);
        expect(await store.ledger.list(acc.id, { limit: 10 })).toHaveLength(2);
      });

      it('answers idempotency_conflict for the same key with another request, and changes nothing', async () => {
        await store.ledger.append(ledger(acc.id, 'grant', 100, { idempotencyKey: 'k1' }));
        expect(
          await store.ledger.append(
            ledger(acc.id, 'grant', 5, { idempotencyKey: 'k1', requestHash: 'other' }),
          ),
        ).toEqual({ kind: 'idempotency_conflict' });
        expect(await balance()).toBe(100);
        expect(await store.ledger.list(acc.id, { limit: 10 })).toHaveLength(1);
      });

      it('keeps idempotency keys apart per account', async () => {
        const other = account();
        await store.accounts.create(other);
        await store.ledger.append(ledger(acc.id, 'grant', 100, { idempotencyKey: 'k1' }));
        expect(
          (await store.ledger.append(ledger(other.id, 'grant', 100, { idempotencyKey: 'k1' }))).kind,
        ).toBe('applied');
        expect((await store.accounts.get(other.id))?.tokenBalance).toBe(100);
      });

      it('keeps the balance within MAX_BALANCE: a move past it is over_maximum and changes nothing', async () => {
        await store.ledger.append(ledger(acc.id, 'grant', MAX_BALANCE - 5));
        expect(await store.ledger.append(ledger(acc.id, 'grant', 5))).toMatchObject({
          kind: 'applied',
          entry: { balanceAfter: MAX_BALANCE },
        });
        for (const [kind, amount] of [
          ['grant', 1],
          ['adjust', 1],
          ['grant', 1_000_000_000_000],
        ] as const) {
          const past = ledger(acc.id, kind, amount, { idempotencyKey: 'top', requestHash: 'top' });
          expect(await store.ledger.append(past)).toEqual({ kind: 'over_maximum', balance: MAX_BALANCE });
        }
        expect(await balance()).toBe(MAX_BALANCE);
        // Exact on the way down too; and the refused idempotency key was not spent.
        expect(await store.ledger.append(ledger(acc.id, 'charge', 1))).toMatchObject({
          kind: 'applied',
          entry: { balanceAfter: MAX_BALANCE - 1 },
        });
        const again = ledger(acc.id, 'grant', 1, { idempotencyKey: 'top', requestHash: 'top' });
        expect(await store.ledger.append(again)).toMatchObject({
          kind: 'applied',
          entry: { balanceAfter: MAX_BALANCE },
        });
        const all = await store.ledger.list(acc.id, { limit: 10 });
        expect(all.map((e) => e.balanceAfter)).toEqual([
          MAX_BALANCE - 5,
          MAX_BALANCE,
          MAX_BALANCE - 1,
          MAX_BALANCE,
        ]);
        expect(all.reduce((sum, e) => sum + e.delta, 0)).toBe(await balance());
      });

      it('answers not_found for an unknown account', async () => {
        const ghost = id('acc');
        expect(await store.ledger.append(ledger(ghost, 'grant', 5))).toEqual({ kind: 'not_found' });
        expect(await store.ledger.append(ledger(ghost, 'grant', 5, { idempotencyKey: 'k' }))).toEqual({
          kind: 'not_found',
        });
        expect(await store.ledger.list(ghost, { limit: 10 })).toEqual([]);
      });
    });
  });
}
