/**
 * What every part of the Store contract shares: the fixture a backend gives (sqlite-store.test.ts,
 * postgres-store.test.ts), the time and the plans the tests use, and records to put in a store.
 * The contract speaks only the Store interface and the domain, so a new backend passes by
 * behaving, not by sharing code.
 */
import { afterEach, beforeEach } from 'vitest';
import type { Account } from '../../src/domain/accounts.js';
import type { ApiKeyRecord } from '../../src/domain/api-keys.js';
import type { AuditAction, AuditDetails, AuditEntry } from '../../src/domain/audit.js';
import { newId } from '../../src/domain/ids.js';
import type { LedgerKind } from '../../src/domain/ledger.js';
import { DEFAULT_PLANS, type Plan } from '../../src/domain/plans.js';
import type { User } from '../../src/domain/users.js';
import type { LedgerAppend, Store } from '../../src/store/store.js';
import { accountRecord, limits } from '../helpers.js';

export interface StoreFixture {
  /** A store on an empty database: not migrated yet. */
  store: Store;
  /** Closes the store and removes whatever the fixture made. */
  cleanup: () => Promise<void>;
}

/** 2026-04-15T13:55:29Z, in epoch seconds. */
export const T = Date.UTC(2026, 3, 15, 13, 55, 29) / 1000;
export const H5 = 18_000;
export const W1 = 604_800;

/** Small limits, so that a few hundred random consumptions run into them often. */
export const TINY: Plan = { id: 'tiny', unlimited: false, limits: limits(20, 50, 6, 10, 30, 4) };
/** The same plan with lower limits: switching to it leaves windows used past their limit. */
export const TINIER: Plan = { id: 'tinier', unlimited: false, limits: limits(8, 25, 3, 5, 12, 2) };

/** Ids made at distinct milliseconds, so they sort in the order they were made. */
let idMs = T * 1000;
export const id = (kind: 'acc' | 'key' | 'usr' | 'led' | 'aud') => newId(kind, ++idMs);

export function account(over: Partial<Account> = {}): Account {
  return accountRecord(T, { id: id('acc'), ...over });
}

export function apiKey(accountId: string, over: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
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

export function user(accountId: string, email: string): User {
  return { id: id('usr'), accountId, email, role: 'member', createdAt: T };
}

export function ledger(
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

export function audit(
  action: AuditAction,
  accountId: string | null,
  targetId: string | null,
  details: AuditDetails = {},
): AuditEntry {
  return { id: id('aud'), at: T, actor: 'admin:ops', action, accountId, targetId, details };
}

/** The state every part but the migrations starts from: the default plans, TINY and TINIER. */
export async function migrateForContract(store: Store): Promise<void> {
  await store.migrate(DEFAULT_PLANS, T);
  await store.plans.put(TINY, T);
  await store.plans.put(TINIER, T);
}

/** A store of the backend for each test, migrated for the contract, handed to `use`, cleaned after. */
export function eachMigratedStore(makeStore: () => Promise<StoreFixture>, use: (store: Store) => void): void {
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    const fixture = await makeStore();
    cleanup = fixture.cleanup;
    await migrateForContract(fixture.store);
    use(fixture.store);
  });
  afterEach(async () => {
    await cleanup();
  });
}
