/**
 * Issue 52, row 1: an account always keeps an owner, however its owners act at once. Two owners
 * demote (or remove) each other at the same instant, through the console's use cases, in 20
 * accounts and both orders; on PostgreSQL through two stores (two pools, as two servers are).
 * Afterwards every account has at least one owner, and every refusal names the rule.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/domain/clock.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { actingAs } from '../../src/service/audit.js';
import type { ConsoleService } from '../../src/service/console.js';
import { createServices, type Services } from '../../src/service/index.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { KEY_SECRET, T0 } from '../helpers.js';
import { postgresAvailable, scratchPostgresStore } from '../postgres.js';

const pgAvailable = await postgresAvailable();
const ACCOUNTS = 20;

interface Pair {
  stores: [Store, Store];
  cleanup: () => Promise<void>;
}

async function sqlitePair(): Promise<Pair> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-race-'));
  const store = new SqliteStore({ path: join(dir, 'toolgate.db') });
  return {
    stores: [store, store],
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresPair(): Promise<Pair> {
  const a = scratchPostgresStore();
  const b = scratchPostgresStore(a.schema);
  return {
    stores: [a.store, b.store],
    async cleanup() {
      await b.store.close();
      await a.cleanup();
    },
  };
}

const consoleOf = (services: Services): ConsoleService =>
  services.console({ publicUrl: () => 'https://tg.example', signup: 'closed', signupPlan: 'free' });

function race(name: string, make: () => Promise<Pair>, skip = false) {
  describe.skipIf(skip)(`${name}: two owners acting on each other at once`, () => {
    let pair: Pair;
    let services: [Services, Services];

    beforeAll(async () => {
      pair = await make();
      const clock = new FixedClock(T0);
      await pair.stores[0].migrate(DEFAULT_PLANS, Math.floor(T0 / 1000));
      services = pair.stores.map((store) =>
        createServices({ store, clock, keyPrefix: 'tg', keySecret: KEY_SECRET }),
      ) as [Services, Services];
    });
    afterAll(async () => pair.cleanup());

    /** ACCOUNTS accounts with owners ann and bob; their user ids. */
    async function accounts() {
      const admin = actingAs('admin:test');
      const made = [];
      for (let i = 0; i < ACCOUNTS; i++) {
        const account = await services[0].accounts.create({ name: `Race ${i}` }, admin);
        if (!account.ok) throw new Error(account.error.message);
        const ann = await services[0].users.add(account.value.id, 'ann@example.com', 'owner', admin);
        const bob = await services[0].users.add(account.value.id, 'bob@example.com', 'owner', admin);
        if (!ann.ok || !bob.ok) throw new Error('users not added');
        made.push({ accountId: account.value.id, ann: ann.value.id, bob: bob.value.id });
      }
      return made;
    }

    async function owners(accountId: string) {
      const users = await services[0].users.list(accountId);
      if (!users.ok) throw new Error(users.error.message);
      return users.value.filter((u) => u.role === 'owner').length;
    }

    for (const action of ['demote', 'remove'] as const) {
      it(`${action}: ${ACCOUNTS} accounts × both orders keep an owner`, async () => {
        const [one, two] = services.map(consoleOf) as [ConsoleService, ConsoleService];
        const act = (c: ConsoleService, actor: string, accountId: string, userId: string) =>
          action === 'demote'
            ? c.setRole(actor, accountId, userId, 'member')
            : c.removeUser(actor, accountId, userId);
        let refusals = 0;
        for (const order of [0, 1]) {
          const made = await accounts();
          const outcomes = await Promise.all(
            made.flatMap(({ accountId, ann, bob }) => {
              const annActs = () => act(one, 'ann@example.com', accountId, bob);
              const bobActs = () => act(two, 'bob@example.com', accountId, ann);
              return order === 0 ? [annActs(), bobActs()] : [bobActs(), annActs()];
            }),
          );
          for (const outcome of outcomes) if (!outcome.ok) refusals++;
          const counts = await Promise.all(made.map((m) => owners(m.accountId)));
          expect(counts.filter((n) => n < 1)).toEqual([]);
          expect(counts.every((n) => n === 1)).toBe(true);
        }
        // Exactly one of each pair went through: the other was refused.
        expect(refusals).toBe(2 * ACCOUNTS);
      });
    }

    it('refuses the last owner demoting or removing themself, with the rule as the message', async () => {
      const c = consoleOf(services[0]);
      const { accountId, ann, bob } = (await accounts())[0]!;
      expect((await c.removeUser('ann@example.com', accountId, bob)).ok).toBe(true);
      const demoted = await c.setRole('ann@example.com', accountId, ann, 'member');
      expect(demoted.ok ? '' : demoted.error.message).toBe('An account keeps at least one owner.');
      const removed = await c.removeUser('ann@example.com', accountId, ann);
      expect(removed.ok ? '' : removed.error.message).toBe('An account keeps at least one owner.');
      expect(await owners(accountId)).toBe(1);
    });

    it('refuses an invitation by someone no longer an owner, and into a suspended account', async () => {
      const c = consoleOf(services[0]);
      const { accountId, bob } = (await accounts())[0]!;
      expect((await c.setRole('ann@example.com', accountId, bob, 'member')).ok).toBe(true);
      const byMember = await c.invite('bob@example.com', accountId, 'eve@example.com', 'owner');
      expect(byMember.ok).toBe(false);
      await services[0].accounts.update(accountId, { status: 'suspended' }, actingAs('admin:test'));
      const suspended = await c.invite('ann@example.com', accountId, 'eve@example.com', 'member');
      expect(suspended.ok).toBe(false);
      const users = await services[0].users.list(accountId);
      expect(users.ok && users.value.map((u) => u.email).sort()).toEqual([
        'ann@example.com',
        'bob@example.com',
      ]);
    });
  });
}

race('SQLite', sqlitePair);
race('PostgreSQL', postgresPair, !pgAvailable);
