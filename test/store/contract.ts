/**
 * The Store contract, written once: every backend runs this same suite. It speaks only the Store
 * interface and the domain, so a new backend passes by behaving, not by sharing code.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Account } from '../../src/domain/accounts.js';
import { type ApiKeyRecord, LAST_USED_RESOLUTION_SECONDS } from '../../src/domain/api-keys.js';
import type { AuditAction, AuditDetails, AuditEntry } from '../../src/domain/audit.js';
import { FixedClock, nowSeconds } from '../../src/domain/clock.js';
import {
  type Amounts,
  applyConsumption,
  fairUseMetadata,
  fairUseView,
  incrementsFor,
  type WindowState,
} from '../../src/domain/fair-use.js';
import { newId } from '../../src/domain/ids.js';
import { type LedgerKind, MAX_BALANCE } from '../../src/domain/ledger.js';
import {
  CATEGORIES,
  type Category,
  DEFAULT_PLANS,
  type Plan,
  type PlanLimits,
} from '../../src/domain/plans.js';
import type { User } from '../../src/domain/users.js';
import { MIGRATIONS, migrationLabel } from '../../src/store/migrations/index.js';
import type { LedgerAppend, Store, UsageCommit } from '../../src/store/store.js';
import { accountRecord, limits } from '../helpers.js';
import { seededRandom } from '../seeded-random.js';

export interface StoreFixture {
  /** A store on an empty database: not migrated yet. */
  store: Store;
  /** Closes the store and removes whatever the fixture made. */
  cleanup: () => Promise<void>;
}

/** 2026-04-15T13:55:29Z, in epoch seconds. */
const T = Date.UTC(2026, 3, 15, 13, 55, 29) / 1000;
const H5 = 18_000;
const W1 = 604_800;

/** Small limits, so that a few hundred random consumptions run into them often. */
const TINY: Plan = { id: 'tiny', unlimited: false, limits: limits(20, 50, 6, 10, 30, 4) };
/** The same plan with lower limits: switching to it leaves windows used past their limit. */
const TINIER: Plan = { id: 'tinier', unlimited: false, limits: limits(8, 25, 3, 5, 12, 2) };

/** Ids made at distinct milliseconds, so they sort in the order they were made. */
let idMs = T * 1000;
const id = (kind: 'acc' | 'key' | 'usr' | 'led' | 'aud') => newId(kind, ++idMs);

function account(over: Partial<Account> = {}): Account {
  return accountRecord(T, { id: id('acc'), ...over });
}

function apiKey(accountId: string, over: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id: id('key'),
    accountId,
    name: 'ci',
    hint: 'tg_…abcd',
    createdAt: T,
    revokedAt: null,
    lastUsedAt: null,
    ...over,
  };
}

function user(accountId: string, email: string): User {
  return { id: id('usr'), accountId, email, role: 'member', createdAt: T };
}

function ledger(
  accountId: string,
  kind: LedgerKind,
  amount: number,
  over: Partial<LedgerAppend> = {},
): LedgerAppend {
  return {
    id: id('led'),
    accountId,
    kind,
    amount,
    reason: null,
    idempotencyKey: null,
    requestHash: `${kind}:${amount}`,
    createdAt: T,
    ...over,
  };
}

function audit(
  action: AuditAction,
  accountId: string | null,
  targetId: string | null,
  details: AuditDetails = {},
): AuditEntry {
  return { id: id('aud'), at: T, actor: 'admin:ops', action, accountId, targetId, details };
}

export function storeContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} store contract`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await makeStore());
    });
    afterEach(async () => {
      await cleanup();
    });

    describe('migrate', () => {
      it('applies the migrations on an empty database, and nothing on a second call', async () => {
        const first = await store.migrate(DEFAULT_PLANS, T);
        expect(first.applied.length).toBeGreaterThan(0);
        expect(first.applied).toEqual(MIGRATIONS.map(migrationLabel));
        expect(first.applied[0]).toBe('001-initial');
        expect(await store.migrate(DEFAULT_PLANS, T + 1)).toEqual({ applied: [] });
        await expect(store.ping()).resolves.toBeUndefined();
      });

      it('seeds the default plans into an empty catalogue', async () => {
        await store.migrate(DEFAULT_PLANS, T);
        const byId = (a: Plan, b: Plan) => a.id.localeCompare(b.id);
        expect((await store.plans.list()).sort(byId)).toEqual([...DEFAULT_PLANS].sort(byId));
        expect(await store.plans.get('subscription_97')).toEqual(
          DEFAULT_PLANS.find((p) => p.id === 'subscription_97'),
        );
      });

      it('seeds nothing into a catalogue that has plans: a plan changed with putPlan survives', async () => {
        await store.migrate(DEFAULT_PLANS, T);
        const changed: Plan = { id: 'free', unlimited: true, limits: limits(1, 2, 3, 4, 5, 6) };
        await store.plans.put(changed, T + 1);
        await store.migrate([...DEFAULT_PLANS, TINY], T + 2);
        expect(await store.plans.get('free')).toEqual(changed);
        expect(await store.plans.get('tiny')).toBeUndefined();
        expect(await store.plans.list()).toHaveLength(DEFAULT_PLANS.length);
      });

      it('seeds the plans it is given when the catalogue is still empty on a later call', async () => {
        await store.migrate([], T);
        expect(await store.plans.list()).toEqual([]);
        await store.migrate([TINY], T + 1);
        expect(await store.plans.list()).toEqual([TINY]);
      });
    });

    describe('once migrated', () => {
      beforeEach(async () => {
        await store.migrate(DEFAULT_PLANS, T);
        await store.plans.put(TINY, T);
        await store.plans.put(TINIER, T);
      });

      describe('plans', () => {
        it('puts a new plan, replaces an existing one, and has no plan it was not given', async () => {
          const pro: Plan = { id: 'pro', unlimited: false, limits: limits(1, 2, 3, 4, 5, 6) };
          await store.plans.put(pro, T);
          expect(await store.plans.get('pro')).toEqual(pro);
          const unlimitedPro: Plan = { id: 'pro', unlimited: true, limits: limits(7, 8, 9, 10, 11, 12) };
          await store.plans.put(unlimitedPro, T + 1);
          expect(await store.plans.get('pro')).toEqual(unlimitedPro);
          expect((await store.plans.list()).filter((p) => p.id === 'pro')).toEqual([unlimitedPro]);
          expect(await store.plans.get('enterprise')).toBeUndefined();
        });
      });

      describe('accounts', () => {
        it('gives back an account as it was created, and nothing for an unknown id', async () => {
          const a = account({ name: 'Initech', planId: 'subscription_27', unlimitedOverride: false });
          await store.accounts.create(a);
          expect(await store.accounts.get(a.id)).toEqual(a);
          expect(await store.accounts.get(id('acc'))).toBeUndefined();
        });

        it('lists accounts in id order, a page at a time after the last id seen', async () => {
          const made = [];
          for (let i = 0; i < 5; i++) {
            const a = account({ name: `A${i}` });
            await store.accounts.create(a);
            made.push(a);
          }
          const ids = made.map((a) => a.id).sort();
          const page1 = await store.accounts.list({ limit: 2 });
          expect(page1.map((a) => a.id)).toEqual(ids.slice(0, 2));
          const page2 = await store.accounts.list({ limit: 2, after: page1[1]!.id });
          expect(page2.map((a) => a.id)).toEqual(ids.slice(2, 4));
          const page3 = await store.accounts.list({ limit: 2, after: page2[1]!.id });
          expect(page3.map((a) => a.id)).toEqual(ids.slice(4));
          expect(await store.accounts.list({ limit: 2, after: ids[4]! })).toEqual([]);
          expect(await store.accounts.list({ limit: 10 })).toEqual(made);
          expect(await store.accounts.count()).toBe(5);
        });

        it('updates only the fields a patch names, and its updatedAt', async () => {
          const a = account();
          await store.accounts.create(a);
          const renamed = await store.accounts.update(a.id, { name: 'Globex' }, T + 10);
          expect(renamed).toEqual({ ...a, name: 'Globex', updatedAt: T + 10 });
          const moved = await store.accounts.update(
            a.id,
            { planId: 'subscription_97', status: 'suspended', unlimitedOverride: false },
            T + 20,
          );
          expect(moved).toEqual({
            ...a,
            name: 'Globex',
            planId: 'subscription_97',
            status: 'suspended',
            unlimitedOverride: false,
            updatedAt: T + 20,
            // A new plan: its periods run from now.
            planSince: T + 20,
          });
          expect(await store.accounts.get(a.id)).toEqual(moved);
        });

        it('clears the unlimited override with null and keeps it when the patch leaves it out', async () => {
          const a = account({ unlimitedOverride: true });
          await store.accounts.create(a);
          expect((await store.accounts.update(a.id, { name: 'B' }, T + 1))?.unlimitedOverride).toBe(true);
          expect(
            (await store.accounts.update(a.id, { unlimitedOverride: null }, T + 2))?.unlimitedOverride,
          ).toBe(null);
          expect(
            (await store.accounts.update(a.id, { unlimitedOverride: false }, T + 3))?.unlimitedOverride,
          ).toBe(false);
        });

        it('answers undefined when updating an unknown account', async () => {
          expect(await store.accounts.update(id('acc'), { name: 'X' }, T)).toBeUndefined();
        });

        it('writes the opening grant to the ledger and the balance in the same step', async () => {
          const a = account();
          await store.accounts.create(a, ledger(a.id, 'grant', 250, { reason: 'opening balance' }));
          expect((await store.accounts.get(a.id))?.tokenBalance).toBe(250);
          const entries = await store.ledger.list(a.id, { limit: 10 });
          expect(entries).toHaveLength(1);
          expect(entries[0]).toMatchObject({
            accountId: a.id,
            kind: 'grant',
            amount: 250,
            delta: 250,
            balanceAfter: 250,
            reason: 'opening balance',
          });
        });

        it('starts without a ledger entry and at a balance of 0 when there is no opening grant', async () => {
          const a = account();
          await store.accounts.create(a);
          expect((await store.accounts.get(a.id))?.tokenBalance).toBe(0);
          expect(await store.ledger.list(a.id, { limit: 10 })).toEqual([]);
        });

        it('revokes every key of an account in the same step that closes it', async () => {
          const a = account();
          await store.accounts.create(a);
          const k1 = apiKey(a.id);
          const k2 = apiKey(a.id);
          const k3 = apiKey(a.id);
          await store.keys.create(k1, 'digest-1');
          await store.keys.create(k2, 'digest-2');
          await store.keys.create(k3, 'digest-3');
          await store.keys.revoke(k1.id, T + 1);
          const other = account();
          await store.accounts.create(other);
          await store.keys.create(apiKey(other.id), 'digest-other');

          expect((await store.accounts.update(a.id, { status: 'closed' }, T + 50))?.status).toBe('closed');
          const keys = await store.keys.list(a.id);
          expect(keys.map((k) => [k.id, k.revokedAt])).toEqual([
            [k1.id, T + 1],
            [k2.id, T + 50],
            [k3.id, T + 50],
          ]);
          for (const d of ['digest-1', 'digest-2', 'digest-3'])
            expect(await store.keys.findActive(d)).toBeUndefined();
          expect((await store.accounts.snapshot(a.id))?.apiKeyCount).toBe(0);
          expect(await store.keys.findActive('digest-other')).toEqual({
            keyId: expect.any(String),
            accountId: other.id,
          });
        });

        it('keeps the keys of a suspended account', async () => {
          const a = account();
          await store.accounts.create(a);
          const k = apiKey(a.id);
          await store.keys.create(k, 'digest-s');
          await store.accounts.update(a.id, { status: 'suspended' }, T + 5);
          expect(await store.keys.findActive('digest-s')).toEqual({ keyId: k.id, accountId: a.id });
        });
      });

      describe('API keys', () => {
        let acc: Account;
        beforeEach(async () => {
          acc = account();
          await store.accounts.create(acc);
        });

        it('gives back a key record as created, without its digest', async () => {
          const k = apiKey(acc.id, { name: null });
          await store.keys.create(k, 'd1f00d');
          expect(await store.keys.get(k.id)).toEqual(k);
          expect(await store.keys.list(acc.id)).toEqual([k]);
          expect(JSON.stringify(await store.keys.list(acc.id))).not.toContain('d1f00d');
          expect(await store.keys.get(id('key'))).toBeUndefined();
        });

        it('finds an active key by its digest, and no longer once it is revoked', async () => {
          const k = apiKey(acc.id);
          await store.keys.create(k, 'digest-a');
          expect(await store.keys.findActive('digest-a')).toEqual({ keyId: k.id, accountId: acc.id });
          expect(await store.keys.findActive('digest-b')).toBeUndefined();
          const revoked = await store.keys.revoke(k.id, T + 9);
          expect(revoked).toEqual({ ...k, revokedAt: T + 9 });
          expect(await store.keys.findActive('digest-a')).toBeUndefined();
        });

        it('revokes idempotently: a second revoke keeps the first time', async () => {
          const k = apiKey(acc.id);
          await store.keys.create(k, 'digest-i');
          await store.keys.revoke(k.id, T + 9);
          expect(await store.keys.revoke(k.id, T + 99)).toEqual({ ...k, revokedAt: T + 9 });
          expect(await store.keys.revoke(id('key'), T + 99)).toBeUndefined();
        });

        it('revokes only the key it is given', async () => {
          const k1 = apiKey(acc.id);
          const k2 = apiKey(acc.id);
          await store.keys.create(k1, 'digest-1');
          await store.keys.create(k2, 'digest-2');
          await store.keys.revoke(k1.id, T + 1);
          expect(await store.keys.findActive('digest-2')).toEqual({ keyId: k2.id, accountId: acc.id });
        });

        it('re-digests a key only while it still has the digest it is expected to have', async () => {
          const k = apiKey(acc.id);
          await store.keys.create(k, 'digest-old');
          await store.keys.rehash(k.id, 'digest-other', 'digest-x');
          expect(await store.keys.findActive('digest-old')).toEqual({ keyId: k.id, accountId: acc.id });
          await store.keys.rehash(k.id, 'digest-old', 'digest-new');
          expect(await store.keys.findActive('digest-old')).toBeUndefined();
          expect(await store.keys.findActive('digest-new')).toEqual({ keyId: k.id, accountId: acc.id });
        });

        it('records last use in one batch, never moving a time back, ignoring unknown keys', async () => {
          const k1 = apiKey(acc.id);
          const k2 = apiKey(acc.id);
          await store.keys.create(k1, 'digest-u1');
          await store.keys.create(k2, 'digest-u2');
          await store.keys.touch([]);
          await store.keys.touch([
            { id: k1.id, at: T + 10 },
            { id: k2.id, at: T + 20 },
            { id: id('key'), at: T + 30 },
          ]);
          await store.keys.touch([{ id: k1.id, at: T + 5 }]);
          expect((await store.keys.get(k1.id))?.lastUsedAt).toBe(T + 10);
          expect((await store.keys.get(k2.id))?.lastUsedAt).toBe(T + 20);
        });

        it('rewrites a last use only once it is LAST_USED_RESOLUTION_SECONDS older', async () => {
          const k = apiKey(acc.id);
          await store.keys.create(k, 'digest-r1');
          await store.keys.touch([{ id: k.id, at: T }]);
          await store.keys.touch([{ id: k.id, at: T + LAST_USED_RESOLUTION_SECONDS - 1 }]);
          expect((await store.keys.get(k.id))?.lastUsedAt).toBe(T);
          await store.keys.touch([{ id: k.id, at: T + LAST_USED_RESOLUTION_SECONDS }]);
          expect((await store.keys.get(k.id))?.lastUsedAt).toBe(T + LAST_USED_RESOLUTION_SECONDS);
        });
      });

      describe('users', () => {
        let acc: Account;
        beforeEach(async () => {
          acc = account();
          await store.accounts.create(acc);
        });

        it('adds a user once per email in an account; another account may have the same email', async () => {
          const u = user(acc.id, 'ada@example.com');
          expect(await store.users.add(u)).toBe('added');
          expect(await store.users.add(user(acc.id, 'ada@example.com'))).toBe('duplicate');
          const other = account();
          await store.accounts.create(other);
          expect(await store.users.add(user(other.id, 'ada@example.com'))).toBe('added');
          expect(await store.users.list(acc.id)).toEqual([u]);
        });

        it('gives back a user by id, and nothing for an unknown id', async () => {
          const u = user(acc.id, 'cy@example.com');
          await store.users.add(u);
          expect(await store.users.get(u.id)).toEqual(u);
          expect(await store.users.get(id('usr'))).toBeUndefined();
        });

        it('removes a user once, answering with the user removed', async () => {
          const u = user(acc.id, 'bob@example.com');
          await store.users.add(u);
          expect(await store.users.remove(u.id)).toEqual(u);
          expect(await store.users.remove(u.id)).toBeUndefined();
          expect(await store.users.list(acc.id)).toEqual([]);
        });
      });

      describe('snapshots', () => {
        it('count only active keys, every user, and carry the account’s plan', async () => {
          const a = account({ planId: 'subscription_27' });
          await store.accounts.create(a);
          const keys = [apiKey(a.id), apiKey(a.id), apiKey(a.id)];
          for (const [i, k] of keys.entries()) await store.keys.create(k, `digest-${i}`);
          await store.keys.revoke(keys[0]!.id, T + 1);
          await store.users.add(user(a.id, 'a@example.com'));
          await store.users.add(user(a.id, 'b@example.com'));
          const other = account();
          await store.accounts.create(other);
          await store.keys.create(apiKey(other.id), 'digest-x');
          await store.users.add(user(other.id, 'c@example.com'));

          const s = await store.accounts.snapshot(a.id);
          expect(s).toEqual({
            account: a,
            plan: DEFAULT_PLANS.find((p) => p.id === 'subscription_27'),
            apiKeyCount: 2,
            userCount: 2,
            windows: [],
          });
          expect(await store.accounts.snapshot(id('acc'))).toBeUndefined();
        });

        it('see a plan change at once', async () => {
          const a = account({ planId: 'tiny' });
          await store.accounts.create(a);
          await store.plans.put({ ...TINY, limits: limits(1, 1, 1, 1, 1, 1) }, T + 1);
          expect((await store.accounts.snapshot(a.id))?.plan.limits).toEqual(limits(1, 1, 1, 1, 1, 1));
        });
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

      describe('usage commits', () => {
        let acc: Account;
        beforeEach(async () => {
          acc = account({ planId: 'tiny' });
          await store.accounts.create(acc);
        });

        const commit = (
          category: Category,
          amounts: Amounts,
          now: number,
          extra: Partial<UsageCommit> = {},
          planLimits: PlanLimits = TINY.limits,
        ) =>
          store.usage.commit({
            accountId: acc.id,
            increments: incrementsFor(planLimits, category, amounts),
            now,
            render: (windows, balanceAfter) => ({ windows, balanceAfter }),
            ...extra,
          });
        const windows = async () => (await store.accounts.snapshot(acc.id))?.windows ?? [];
        const bySlot = (ws: WindowState[]) =>
          [...ws].sort((a, b) =>
            `${a.category}.${a.unit}.${a.window}`.localeCompare(`${b.category}.${b.unit}.${b.window}`),
          );

        it('matches the domain reference over a few hundred random consumptions across 5h and 1w ends', async () => {
          for (const seed of [1, 2, 3]) {
            const other = account({ planId: 'tiny' });
            await store.accounts.create(other);
            const random = seededRandom(seed);
            const pick = <X>(xs: readonly X[]): X => xs[Math.floor(random() * xs.length)]!;
            const clock = new FixedClock(T * 1000);
            let plan = TINY;
            let reference: WindowState[] = [];
            const seen = { committed: 0, exceeded: 0, atExactEnd: 0, planSwitches: 0, restarted1w: 0 };

            for (let step = 0; step < 300; step++) {
              const now0 = nowSeconds(clock);
              const running = reference.filter((w) => w.endsAt > now0);
              const r = random();
              if (r < 0.15 && running.length > 0) {
                // Land on a window's end, or a second either side of it.
                clock.set((pick(running).endsAt + pick([-1, 0, 0, 1])) * 1000);
              } else if (r < 0.65) clock.advance(Math.floor(random() * 1_800));
              else if (r < 0.9) clock.advance(3_600 + Math.floor(random() * 5 * 3_600));
              else clock.advance(86_400 + Math.floor(random() * 2 * 86_400));
              const now = nowSeconds(clock);
              if (reference.some((w) => w.endsAt === now)) seen.atExactEnd++;

              if (random() < 0.05) {
                plan = plan === TINY ? TINIER : TINY;
                await store.accounts.update(other.id, { planId: plan.id }, now);
                seen.planSwitches++;
              }

              const category = pick(CATEGORIES);
              const requests = pick([0, 1, 1, 1, 2]);
              const records = random() < 0.1 ? 0 : Math.floor(random() * 13) + (requests === 0 ? 1 : 0);
              const increments = incrementsFor(plan.limits, category, { records, requests });
              const expected = applyConsumption(reference, increments, now);
              const outcome = await store.usage.commit({
                accountId: other.id,
                increments,
                now,
                render: () => null,
              });
              const where = `seed ${seed}, step ${step}, t+${now - T}s, ${category} ${records}/${requests}`;
              if (expected.ok) {
                expect(outcome.kind, where).toBe('committed');
                const before1w = reference.find((w) => w.category === category && w.window === '1w');
                const after1w = expected.states.find((w) => w.category === category && w.window === '1w');
                if (before1w && after1w && before1w.startedAt !== after1w.startedAt) seen.restarted1w++;
                reference = expected.states;
                seen.committed++;
              } else {
                expect(outcome, where).toEqual({ kind: 'exceeded', exceeded: expected.exceeded });
                seen.exceeded++;
              }

              const snapshot = await store.accounts.snapshot(other.id);
              expect(snapshot?.plan.id, where).toBe(plan.id);
              const stored = snapshot?.windows ?? [];
              expect(fairUseView(plan.limits, stored, now), where).toEqual(
                fairUseView(plan.limits, reference, now),
              );
              for (const c of CATEGORIES) {
                expect(fairUseMetadata(plan.limits, stored, c, now), where).toEqual(
                  fairUseMetadata(plan.limits, reference, c, now),
                );
              }
              // And as the windows will look a little later, before anything else happens.
              const later = now + pick([1, 600, H5 - 1, H5, W1]);
              expect(fairUseView(plan.limits, stored, later), where).toEqual(
                fairUseView(plan.limits, reference, later),
              );
            }

            // The run must have met what it is meant to test.
            expect(seen.committed).toBeGreaterThan(50);
            expect(seen.exceeded).toBeGreaterThan(20);
            expect(seen.atExactEnd).toBeGreaterThan(5);
            expect(seen.restarted1w).toBeGreaterThan(1);
            expect(seen.planSwitches).toBeGreaterThan(1);
          }
        });

        it('starts the windows at the first consumption and leaves their ends alone after', async () => {
          await commit('enrich', { records: 7, requests: 1 }, T);
          await commit('enrich', { records: 2, requests: 1 }, T + 100);
          expect(bySlot(await windows())).toEqual([
            { category: 'enrich', unit: 'records', window: '1w', startedAt: T, endsAt: T + W1, used: 9 },
            { category: 'enrich', unit: 'records', window: '5h', startedAt: T, endsAt: T + H5, used: 9 },
            { category: 'enrich', unit: 'requests', window: '5h', startedAt: T, endsAt: T + H5, used: 2 },
          ]);
        });

        it('decides consumptions made together each on the windows the ones before it left', async () => {
          // Made in one turn of the event loop: SQLite writes them in one group commit, with the
          // account's windows cached (read once before).
          await commit('enrich', { records: 1, requests: 0 }, T);
          expect((await store.accounts.snapshot(acc.id))?.windows).toHaveLength(2);
          const outcomes = await Promise.all(
            [1, 2, 3, 4].map(() => commit('enrich', { records: 6, requests: 1 }, T)),
          );
          expect(outcomes.filter((o) => o.kind === 'committed')).toHaveLength(3);
          expect(outcomes.filter((o) => o.kind === 'exceeded')).toEqual([
            {
              kind: 'exceeded',
              exceeded: {
                slot: { category: 'enrich', unit: 'records', window: '5h' },
                limit: 20,
                used: 19,
                resetsAt: T + H5,
              },
            },
          ]);
          expect(bySlot(await windows()).map((w) => w.used)).toEqual([19, 19, 3]);
        });

        it('starts a new window with a consumption made at exactly the end of the last one', async () => {
          await commit('enrich', { records: 20, requests: 1 }, T);
          const outcome = await commit('enrich', { records: 20, requests: 1 }, T + H5);
          expect(outcome.kind).toBe('committed');
          const h5 = (await windows()).find((w) => w.unit === 'records' && w.window === '5h');
          expect(h5).toMatchObject({ startedAt: T + H5, endsAt: T + 2 * H5, used: 20 });
        });

        it('refuses all-or-nothing: nothing of a refused consumption is kept, and the window is named', async () => {
          // records.1w fills to 50 over three 5h windows; the fourth consumption fits records.5h and
          // requests.5h but not records.1w.
          await commit('enrich', { records: 20, requests: 1 }, T);
          await commit('enrich', { records: 20, requests: 1 }, T + H5);
          await commit('enrich', { records: 5, requests: 1 }, T + 2 * H5);
          const before = bySlot(await windows());
          const outcome = await commit('enrich', { records: 6, requests: 1 }, T + 2 * H5 + 10);
          expect(outcome).toEqual({
            kind: 'exceeded',
            exceeded: {
              slot: { category: 'enrich', unit: 'records', window: '1w' },
              limit: 50,
              used: 45,
              resetsAt: T + W1,
            },
          });
          expect(bySlot(await windows())).toEqual(before);
        });

        it('keeps nothing of a refused consumption that would have restarted an ended window', async () => {
          await commit('enrich', { records: 20, requests: 1 }, T);
          await commit('enrich', { records: 20, requests: 1 }, T + H5);
          const before = bySlot(await windows());
          // At 2 x 5h the 5h windows have ended; restarting them must be undone when records.1w refuses.
          const outcome = await commit('enrich', { records: 11, requests: 1 }, T + 2 * H5);
          expect(outcome.kind === 'exceeded' && outcome.exceeded.slot.window).toBe('1w');
          expect(bySlot(await windows())).toEqual(before);
        });

        it('refuses an amount above the limit of a fresh window with no reset time', async () => {
          expect(await commit('search', { records: 11, requests: 1 }, T)).toEqual({
            kind: 'exceeded',
            exceeded: {
              slot: { category: 'search', unit: 'records', window: '5h' },
              limit: 10,
              used: 0,
              resetsAt: null,
            },
          });
          expect(await windows()).toEqual([]);
        });

        it('charges tokens in the same commit and hands the balance to render', async () => {
          await store.ledger.append(ledger(acc.id, 'grant', 10));
          const entryId = id('led');
          const outcome = await commit('enrich', { records: 3, requests: 1 }, T, {
            charge: { entryId, amount: 4, reason: 'enrich' },
          });
          expect(outcome).toMatchObject({ kind: 'committed', response: { balanceAfter: 6 } });
          expect((await store.accounts.get(acc.id))?.tokenBalance).toBe(6);
          const entries = await store.ledger.list(acc.id, { limit: 10 });
          expect(entries.at(-1)).toMatchObject({
            id: entryId,
            kind: 'charge',
            amount: 4,
            delta: -4,
            balanceAfter: 6,
          });
        });

        it('rolls the windows back when the charge does not fit', async () => {
          await store.ledger.append(ledger(acc.id, 'grant', 5));
          await commit('enrich', { records: 1, requests: 1 }, T);
          const before = bySlot(await windows());
          const outcome = await commit('enrich', { records: 3, requests: 1 }, T + 1, {
            charge: { entryId: id('led'), amount: 6, reason: null },
          });
          expect(outcome).toEqual({ kind: 'insufficient', balance: 5 });
          expect(bySlot(await windows())).toEqual(before);
          expect((await store.accounts.get(acc.id))?.tokenBalance).toBe(5);
          expect(await store.ledger.list(acc.id, { limit: 10 })).toHaveLength(1);
        });

        it('renders from the windows after the consumption', async () => {
          const outcome = await commit('search', { records: 4, requests: 1 }, T);
          expect(outcome.kind).toBe('committed');
          const rendered =
            outcome.kind === 'committed' ? (outcome.response as { windows: WindowState[] }) : null;
          expect(bySlot(rendered?.windows ?? [])).toEqual(bySlot(await windows()));
          expect(rendered?.windows.find((w) => w.unit === 'records' && w.window === '5h')?.used).toBe(4);
        });

        it('replays the stored response for the same idempotency key and request, counting once', async () => {
          const idempotency = { key: 'use-1', requestHash: 'h1' };
          const first = await commit('enrich', { records: 5, requests: 1 }, T, { idempotency });
          expect(first.kind).toBe('committed');
          let renders = 0;
          const again = await commit('enrich', { records: 5, requests: 1 }, T + 60, {
            idempotency,
            render: () => {
              renders++;
              return 'fresh';
            },
          });
          expect(again).toEqual({
            kind: 'replayed',
            response: first.kind === 'committed' ? first.response : null,
          });
          expect(renders).toBe(0);
          expect((await windows()).find((w) => w.unit === 'records' && w.window === '5h')?.used).toBe(5);
        });

        it('replays the stored response byte for byte, member order included', async () => {
          const idempotency = { key: 'use-order', requestHash: 'h1' };
          const answer = { zeta: 1, alpha: { long_member_name: true, b: [3, 1, 2] }, mid: 'x' };
          const first = await commit('enrich', { records: 1, requests: 1 }, T, {
            idempotency,
            render: () => answer,
          });
          const again = await commit('enrich', { records: 1, requests: 1 }, T + 1, { idempotency });
          expect(first.kind === 'committed' && JSON.stringify(first.response)).toBe(JSON.stringify(answer));
          expect(again.kind === 'replayed' && JSON.stringify(again.response)).toBe(JSON.stringify(answer));
        });

        it('answers idempotency_conflict for the same key with another request, and consumes nothing', async () => {
          await commit('enrich', { records: 5, requests: 1 }, T, {
            idempotency: { key: 'use-1', requestHash: 'h1' },
          });
          const before = bySlot(await windows());
          expect(
            await commit('enrich', { records: 6, requests: 1 }, T + 1, {
              idempotency: { key: 'use-1', requestHash: 'h2' },
            }),
          ).toEqual({ kind: 'idempotency_conflict' });
          expect(bySlot(await windows())).toEqual(before);
        });

        it('answers not_found for an unknown account', async () => {
          const ghost = id('acc');
          const increments = incrementsFor(TINY.limits, 'enrich', { records: 1, requests: 1 });
          const render = () => null;
          expect(await store.usage.commit({ accountId: ghost, increments, now: T, render })).toEqual({
            kind: 'not_found',
          });
          expect(
            await store.usage.commit({
              accountId: ghost,
              increments,
              now: T,
              render,
              idempotency: { key: 'k', requestHash: 'h' },
            }),
          ).toEqual({ kind: 'not_found' });
          // An amount over every limit: no window would even start, and the account is still unknown.
          const over = incrementsFor(TINY.limits, 'enrich', { records: 1_000, requests: 1_000 });
          expect(await store.usage.commit({ accountId: ghost, increments: over, now: T, render })).toEqual({
            kind: 'not_found',
          });
        });
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
            [
              audit('key.create', a.id, k.id, { name: 'ci' }),
              (e) => store.keys.create(k, 'digest-audited', e),
            ],
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

          expect(
            await store.accounts.update(ghost, { name: 'X' }, T, none('account.update')),
          ).toBeUndefined();
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
  });
}
