/**
 * The console's links and sessions on both backends, through the console service on the real
 * services: single use (also when two use it at once), expiry at 15 minutes, idle and absolute
 * session ends, a removed membership ending sessions, sign-up open and closed, roles audited.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/domain/clock.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import type { Surface } from '../../src/domain/usage-history.js';
import { actingAs } from '../../src/service/audit.js';
import { type ConsoleService, sha256 } from '../../src/service/console.js';
import { createServices, type Services } from '../../src/service/index.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { KEY_SECRET, T0 } from '../helpers.js';
import { postgresAvailable, scratchPostgresStore } from '../postgres.js';

interface Fixture {
  store: Store;
  cleanup: () => Promise<void>;
}

async function sqlite(): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-console-'));
  const store = new SqliteStore({ path: join(dir, 'toolgate.db') });
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const pgAvailable = await postgresAvailable();
const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;

function contract(name: string, make: () => Promise<Fixture>, skip = false) {
  describe.skipIf(skip)(`${name}: console links and sessions`, () => {
    let fixture: Fixture;
    let clock: FixedClock;
    let services: Services;
    let consoleService: ConsoleService;
    let accountId: string;
    const make2 = (signup: 'open' | 'closed') =>
      services.console({ publicUrl: () => 'https://tg.example/', signup, signupPlan: 'free' });

    beforeEach(async () => {
      fixture = await make();
      clock = new FixedClock(T0);
      await fixture.store.migrate(DEFAULT_PLANS, Math.floor(T0 / 1000));
      services = createServices({ store: fixture.store, clock, keyPrefix: 'tg', keySecret: KEY_SECRET });
      const admin = actingAs('admin:test');
      const account = await services.accounts.create({ name: 'Acme' }, admin);
      if (!account.ok) throw new Error(account.error.message);
      accountId = account.value.id;
      await services.users.add(accountId, 'Ann@Example.com', 'owner', admin);
      consoleService = make2('closed');
    });
    afterEach(async () => fixture.cleanup());

    it('keeps only a hash of the link token, and the link works once', async () => {
      const made = await consoleService.operatorLink(actingAs('cli:test'), 'ann@example.com');
      expect(made.ok).toBe(true);
      const url = made.ok ? made.value.url : '';
      expect(url.startsWith('https://tg.example/console/auth?token=')).toBe(true);
      const token = tokenOf(url);
      expect(await fixture.store.console.useLink(token, Math.floor(T0 / 1000))).toBeUndefined();
      const first = await consoleService.followLink(token);
      expect(first.ok).toBe(true);
      if (!first.ok) return;
      expect(first.value.next).toBe(`/console/a/${accountId}/`);
      const again = await consoleService.followLink(token);
      expect(again.ok).toBe(false);
    });

    it('spends a link only on a sign-in that goes ahead: refused unspent while its email is in no account', async () => {
      const admin = actingAs('admin:test');
      const bob = await services.users.add(accountId, 'bob@example.com', 'member', admin);
      if (!bob.ok) throw new Error(bob.error.message);
      const token = tokenOf(await consoleService.makeLink({ email: 'bob@example.com' }));
      await services.users.remove(bob.value.id, admin);
      expect((await consoleService.followLink(token)).ok).toBe(false);
      // Still unused: added back within its 15 minutes, the same link signs in, once.
      expect(await fixture.store.console.findLink(sha256(token), Math.floor(T0 / 1000))).toBeDefined();
      await services.users.add(accountId, 'bob@example.com', 'member', admin);
      expect((await consoleService.followLink(token)).ok).toBe(true);
      expect((await consoleService.followLink(token)).ok).toBe(false);
    });

    it('gives a link to one of two callers at once', async () => {
      const token = tokenOf(await consoleService.makeLink({ email: 'ann@example.com' }));
      const t = Math.floor(T0 / 1000);
      const both = await Promise.all([
        fixture.store.console.useLink(sha256(token), t),
        fixture.store.console.useLink(sha256(token), t),
      ]);
      expect(both.filter((l) => l !== undefined)).toHaveLength(1);
    });

    it('refuses a link after 15 minutes', async () => {
      const token = tokenOf(await consoleService.makeLink({ email: 'ann@example.com' }));
      clock.advance(15 * 60);
      const followed = await consoleService.followLink(token);
      expect(followed.ok).toBe(false);
    });

    it('accepts a link just before 15 minutes', async () => {
      const token = tokenOf(await consoleService.makeLink({ email: 'ann@example.com' }));
      clock.advance(15 * 60 - 1);
      expect((await consoleService.followLink(token)).ok).toBe(true);
    });

    it('ends a session idle for 24 hours, and any after 30 days', async () => {
      const followed = await consoleService.followLink(
        tokenOf(await consoleService.makeLink({ email: 'ann@example.com' })),
      );
      if (!followed.ok) throw new Error('not followed');
      const cookie = followed.value.cookieValue;
      const who = await consoleService.signedIn(cookie);
      expect(who?.email).toBe('ann@example.com');
      expect(who?.memberships).toEqual([
        { accountId, accountName: 'Acme', userId: expect.stringMatching(/^usr_/), role: 'owner' },
      ]);
      // Seen every 23 hours: alive past a day, until 30 days since it began.
      for (let i = 0; i < 31; i++) {
        clock.advance(23 * 3600);
        expect((await consoleService.signedIn(cookie))?.email).toBe('ann@example.com');
      }
      // 31 x 23 h = 713 h; 7 more make the 30 days.
      clock.advance(7 * 3600);
      expect(await consoleService.signedIn(cookie)).toBeUndefined();
      const fresh = await consoleService.followLink(
        tokenOf(await consoleService.makeLink({ email: 'ann@example.com' })),
      );
      if (!fresh.ok) throw new Error('not followed');
      clock.advance(24 * 3600);
      expect(await consoleService.signedIn(fresh.value.cookieValue)).toBeUndefined();
    });

    it('ends sessions when the last membership is removed, and signs out', async () => {
      const admin = actingAs('admin:test');
      const bob = await services.users.add(accountId, 'bob@example.com', 'member', admin);
      if (!bob.ok) throw new Error('no bob');
      const followed = await consoleService.followLink(
        tokenOf(await consoleService.makeLink({ email: 'bob@example.com' })),
      );
      if (!followed.ok) throw new Error('not followed');
      expect((await consoleService.signedIn(followed.value.cookieValue))?.memberships).toHaveLength(1);
      const removed = await consoleService.removeUser('ann@example.com', accountId, bob.value.id);
      expect(removed.ok).toBe(true);
      expect(await consoleService.signedIn(followed.value.cookieValue)).toBeUndefined();
      expect(await fixture.store.console.getSession(sha256(followed.value.cookieValue))).toBeUndefined();

      const ann = await consoleService.followLink(
        tokenOf(await consoleService.makeLink({ email: 'ann@example.com' })),
      );
      if (!ann.ok) throw new Error('not followed');
      const who = await consoleService.signedIn(ann.value.cookieValue);
      if (!who) throw new Error('not signed in');
      await consoleService.signOut(who);
      expect(await consoleService.signedIn(ann.value.cookieValue)).toBeUndefined();
      const audit = await fixture.store.audit.list({ limit: 100 });
      const actions = audit.filter((e) => e.actor === 'user:ann@example.com').map((e) => e.action);
      expect(actions).toEqual(['user.remove', 'console.sign_in', 'console.sign_out']);
    });

    it('changes a role within the account only, audited as the user', async () => {
      const other = await services.accounts.create({ name: 'Other' }, actingAs('admin:test'));
      if (!other.ok) throw new Error('no account');
      const stranger = await services.users.add(
        other.value.id,
        'eve@example.com',
        'owner',
        actingAs('admin:test'),
      );
      if (!stranger.ok) throw new Error('no user');
      const refused = await consoleService.setRole('ann@example.com', accountId, stranger.value.id, 'member');
      expect(refused.ok).toBe(false);
      expect(
        (await services.users.list(other.value.id)).ok &&
          (await fixture.store.users.get(stranger.value.id))?.role,
      ).toBe('owner');
      const bob = await services.users.add(accountId, 'bob@example.com', 'member', actingAs('admin:test'));
      if (!bob.ok) throw new Error('no bob');
      expect((await consoleService.setRole('ann@example.com', accountId, bob.value.id, 'owner')).ok).toBe(
        true,
      );
      expect((await consoleService.setRole('ann@example.com', accountId, bob.value.id, 'admin')).ok).toBe(
        false,
      );
      expect((await fixture.store.users.get(bob.value.id))?.role).toBe('owner');
      const entries = await fixture.store.audit.list({ limit: 100, accountId });
      expect(entries.at(-1)).toMatchObject({
        action: 'user.role',
        actor: 'user:ann@example.com',
        targetId: bob.value.id,
      });
    });

    it('sends no link to an unknown email while sign-up is closed, and signs up when open', async () => {
      expect(await consoleService.signInRequested('new@example.com', null)).toBeUndefined();
      expect((await consoleService.operatorLink(actingAs('cli:test'), 'new@example.com')).ok).toBe(false);
      // A link made while closed leads nowhere for an unknown email.
      const closedToken = tokenOf(await consoleService.makeLink({ email: 'new@example.com' }));
      expect((await consoleService.followLink(closedToken)).ok).toBe(false);

      const open = make2('open');
      const mail = await open.signInRequested('new@example.com', '/oauth/authorize?x=1');
      expect(mail?.to).toBe('new@example.com');
      const followed = await open.followLink(tokenOf(mail!.url));
      if (!followed.ok) throw new Error(followed.error.message);
      expect(followed.value.next).toBe('/oauth/authorize?x=1');
      const who = await open.signedIn(followed.value.cookieValue);
      expect(who?.memberships).toHaveLength(1);
      expect(who?.memberships[0]?.role).toBe('owner');
      const account = await services.accounts.get(who!.memberships[0]!.accountId);
      expect(account.ok && account.value.plan).toBe('free');
    });

    it('sums usage by key and by tool as usage report does, from one query', async () => {
      const other = await services.accounts.create({ name: 'Other' }, actingAs('admin:test'));
      if (!other.ok) throw new Error('no account');
      const row = (
        accountId: string,
        day: string,
        keyId: string,
        tool: string,
        surface: Surface,
        calls: number,
      ) => ({
        accountId,
        day,
        keyId,
        tool,
        surface,
        calls,
        tokens: calls * 2,
        records: calls * 3,
        withData: calls,
        withoutData: 0,
        failed: 1,
      });
      await fixture.store.usageHistory.add([
        row(accountId, '2026-04-01', 'key_a', 'get_account', 'http', 3),
        row(accountId, '2026-04-01', 'key_a', 'get_account', 'mcp', 4),
        row(accountId, '2026-04-02', 'key_a', 'search_people', 'http', 5),
        row(accountId, '2026-04-03', 'key_b', 'get_account', 'http', 7),
        row(accountId, '2026-03-01', 'key_b', 'get_account', 'http', 100),
        row(other.value.id, '2026-04-01', 'key_c', 'get_account', 'http', 1000),
      ]);
      const range = { from: '2026-03-17', to: '2026-04-15' };
      const breakdown = await consoleService.usageBreakdown(accountId, range.from, range.to);
      for (const by of ['tool', 'key'] as const) {
        const report = await services.billing.history(accountId, { ...range, by });
        if (!report.ok) throw new Error(report.error.message);
        const expected = report.value.rows.map(({ key_id, tool, ...counts }) => ({
          group: key_id ?? tool,
          ...counts,
        }));
        expect(by === 'tool' ? breakdown.byTool : breakdown.byKey).toEqual(expected);
      }
      expect(breakdown.byKey.map((r) => [r.group, r.calls])).toEqual([
        ['key_a', 12],
        ['key_b', 7],
      ]);
    });

    it("reads today's usage every time, and a settled day's once for at most ten minutes", async () => {
      const counts = { tokens: 0, records: 0, withData: 0, withoutData: 0, failed: 0 };
      const add = (day: string, calls: number) =>
        fixture.store.usageHistory.add([
          { accountId, day, keyId: 'key_a', tool: 'get_account', surface: 'http', calls, ...counts },
        ]);
      const calls = async (from: string, to: string) => {
        const breakdown = await consoleService.usageBreakdown(accountId, from, to);
        const history = await services.billing.history(accountId, { from, to, by: 'key' });
        if (!history.ok) throw new Error(history.error.message);
        // The Usage page and toolgate usage report read the same kept sums: they always agree.
        expect(history.value.rows[0]?.calls).toBe(breakdown.byKey[0]?.calls);
        return breakdown.byKey[0]?.calls;
      };
      // 13:55 on 2026-04-15: yesterday ended more than an hour ago, so it is settled.
      await add('2026-04-14', 1);
      expect(await calls('2026-03-17', '2026-04-15')).toBe(1);
      await add('2026-04-15', 10);
      expect(await calls('2026-03-17', '2026-04-15')).toBe(11);
      // A flush to a settled day (a server back after an hour cut off) shows within ten minutes.
      await add('2026-04-14', 100);
      expect(await calls('2026-03-17', '2026-04-15')).toBe(11);
      clock.advance(599);
      expect(await calls('2026-03-17', '2026-04-15')).toBe(11);
      clock.advance(1);
      expect(await calls('2026-03-17', '2026-04-15')).toBe(111);
      // In the first hour of a day, yesterday is still read every time.
      clock.set(Date.UTC(2026, 3, 16, 0, 30));
      expect(await calls('2026-03-18', '2026-04-16')).toBe(111);
      await add('2026-04-15', 1000);
      expect(await calls('2026-03-18', '2026-04-16')).toBe(1111);
    });

    it('names an account for an invitation, and keeps hostile return paths out', async () => {
      const invited = await consoleService.invite(
        'ann@example.com',
        accountId,
        'Carol@Example.com',
        'member',
      );
      if (!invited.ok) throw new Error(invited.error.message);
      expect(invited.value).toMatchObject({ to: 'carol@example.com', accountName: 'Acme' });
      const followed = await consoleService.followLink(tokenOf(invited.value.url));
      expect(followed.ok && followed.value.next).toBe(`/console/a/${accountId}/`);
      for (const hostile of [
        '//evil.example/',
        '/\\evil.example',
        'https://evil.example/',
        '/x\r\nSet-Cookie: a=b',
      ]) {
        const token = tokenOf(await consoleService.makeLink({ email: 'ann@example.com', returnTo: hostile }));
        const f = await consoleService.followLink(token);
        expect(f.ok && f.value.next).toBe(`/console/a/${accountId}/`);
      }
      expect(
        (await consoleService.operatorLink(actingAs('cli:test'), 'ann@example.com', 'acc_nope')).ok,
      ).toBe(false);
    });
  });
}

contract('SQLite', sqlite);
contract('PostgreSQL', async () => scratchPostgresStore(), !pgAvailable);
