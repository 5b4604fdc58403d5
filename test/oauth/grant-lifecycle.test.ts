/**
 * Issue 52, rows 2-4: a connector ends with the person or the account that allowed it, and only an
 * owner of an active account may allow one. On each backend, with real tokens (harness.ts, flow.ts):
 * removing the user who allowed a grant (the admin API's and the console's use case) or closing the
 * account refuses its access token at once (401) and its refresh token (400 invalid_grant), while
 * another person's grant in the account keeps working; a suspended account's grant answers as its
 * keys do; a member, and an owner of a suspended account, are not offered Allow and a forged Allow
 * is refused (403) with no grant made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actingAs } from '../../src/service/audit.js';
import { accountWithKey } from '../helpers.js';
import { postgresAvailable } from '../postgres.js';
import { authorize, authorizeUrl, callTool, csrfOf, exchange, Jar, register, token } from './flow.js';
import { type Backend, type Live, liveServer, person } from './harness.js';

const pgAvailable = await postgresAvailable();
const admin = actingAs('admin:test');

function lifecycle(backend: Backend, skip = false) {
  describe.skipIf(skip)(`${backend}: a grant's life follows its person and account`, () => {
    let live: Live;
    beforeAll(async () => {
      live = await liveServer(backend);
    });
    afterAll(async () => live?.close());

    /** A grant allowed by `email` (an owner of `accountId`): its tokens and client. */
    async function connect(accountId: string, email: string) {
      const cookie = live.identity.signIn(await person(live, email, [accountId]));
      const clientId = String((await register(live)).body.client_id);
      const t = await exchange(live, await authorize(live, clientId, cookie, accountId));
      expect(t.status).toBe(200);
      return { access: t.body.access_token!, refresh: t.body.refresh_token!, clientId };
    }

    const refresh = (g: { refresh: string; clientId: string }) =>
      token(live, { grant_type: 'refresh_token', refresh_token: g.refresh, client_id: g.clientId });

    async function userId(accountId: string, email: string) {
      const users = await live.services.users.list(accountId);
      if (!users.ok) throw new Error(users.error.message);
      return users.value.find((u) => u.email === email)!.id;
    }

    it('removing the user (admin API) ends the grants they allowed, not another person’s', async () => {
      const { accountId } = await accountWithKey(live.services);
      const ann = await connect(accountId, 'ann@example.com');
      const bob = await connect(accountId, 'bob@example.com');
      expect((await callTool(live, ann.access, 'get_account')).status).toBe(200);
      const removed = await live.services.users.remove(await userId(accountId, 'ann@example.com'), admin);
      expect(removed.ok).toBe(true);
      expect((await callTool(live, ann.access, 'get_account')).status).toBe(401);
      const refreshed = await refresh(ann);
      expect(refreshed.status).toBe(400);
      expect(refreshed.body.error).toBe('invalid_grant');
      // Bob's connector is his own.
      expect((await callTool(live, bob.access, 'get_account')).status).toBe(200);
      const bobs = await refresh(bob);
      expect(bobs.status).toBe(200);
      expect((await callTool(live, bobs.body.access_token!, 'get_account')).status).toBe(200);
      // Listed as revoked, as any revoked key.
      const grants = await live.store.keys.list(accountId);
      expect(grants.filter((k) => k.hint === 'oauth grant' && k.revokedAt !== null)).toHaveLength(1);
    });

    it('removing the user in the console ends their grants', async () => {
      const { accountId } = await accountWithKey(live.services);
      await person(live, 'owner@example.com', [accountId]);
      const g = await connect(accountId, 'cat@example.com');
      const c = live.services.console({ publicUrl: () => live.url, signup: 'closed', signupPlan: 'free' });
      const removed = await c.removeUser(
        'owner@example.com',
        accountId,
        await userId(accountId, 'cat@example.com'),
      );
      expect(removed.ok).toBe(true);
      expect((await callTool(live, g.access, 'get_account')).status).toBe(401);
      expect((await refresh(g)).body.error).toBe('invalid_grant');
    });

    it('closing the account ends its grants: access 401, refresh invalid_grant', async () => {
      const { accountId } = await accountWithKey(live.services);
      const g = await connect(accountId, 'dan@example.com');
      expect((await live.services.accounts.update(accountId, { status: 'closed' }, admin)).ok).toBe(true);
      expect((await callTool(live, g.access, 'get_account')).status).toBe(401);
      const refreshed = await refresh(g);
      expect(refreshed.status).toBe(400);
      expect(refreshed.body.error).toBe('invalid_grant');
    });

    it('a suspended account’s grant answers as its keys do', async () => {
      const { accountId, key } = await accountWithKey(live.services);
      const g = await connect(accountId, 'eve@example.com');
      await live.services.accounts.update(accountId, { status: 'suspended' }, admin);
      for (const name of ['get_account', 'get_billing', 'get_usage']) {
        const byKey = await callTool(live, key, name);
        const byGrant = await callTool(live, g.access, name);
        expect([name, byGrant.status, byGrant.body.result?.isError ?? false]).toEqual([
          name,
          byKey.status,
          byKey.body.result?.isError ?? false,
        ]);
      }
      expect(JSON.stringify((await callTool(live, g.access, 'get_account')).body)).toContain('suspended');
    });

    /** Up to the consent page for `accountId` as `email` with `role`: the page's HTML and its URL. */
    async function consentPage(accountId: string, email: string, role: 'owner' | 'member') {
      const user = await live.services.users.add(accountId, email, role, admin);
      if (!user.ok) throw new Error(user.error.message);
      const account = await live.store.accounts.get(accountId);
      const cookie = live.identity.signIn({
        email,
        sessionId: 'ses_test',
        memberships: [{ accountId, accountName: account!.name, userId: user.value.id, role }],
      });
      const clientId = String((await register(live)).body.client_id);
      const jar = new Jar();
      jar.add(cookie);
      const { url: authorize } = authorizeUrl(live, clientId, { state: 's', resource: '' });
      let res = await jar.fetch(authorize);
      const url = new URL(res.headers.get('location')!, live.url).href;
      res = await jar.fetch(url);
      return { jar, url, html: await res.text(), status: res.status };
    }

    async function forgedAllow(page: { jar: Jar; url: string; html: string }, accountId: string) {
      return page.jar.fetch(page.url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrfOf(page.html), account_id: accountId, decision: 'allow' }),
      });
    }

    it('a member is told only an owner can allow, and a forged Allow is refused with no grant', async () => {
      const { accountId } = await accountWithKey(live.services, { name: 'Members Inc' });
      const page = await consentPage(accountId, 'mia@example.com', 'member');
      expect(page.status).toBe(200);
      expect(page.html).toContain('Only an owner of Members Inc can allow a connector');
      expect(page.html).not.toMatch(/value="allow"/);
      const res = await forgedAllow(page, accountId);
      expect(res.status).toBe(403);
      expect(await live.oauth.grants.list(accountId)).toHaveLength(0);
    });

    it('an owner of a suspended account cannot allow a connector', async () => {
      const { accountId } = await accountWithKey(live.services, { name: 'Paused Ltd' });
      await live.services.accounts.update(accountId, { status: 'suspended' }, admin);
      const page = await consentPage(accountId, 'sam@example.com', 'owner');
      expect(page.html).toContain('Paused Ltd is suspended: no connector can be allowed for it.');
      const res = await forgedAllow(page, accountId);
      expect(res.status).toBe(403);
      expect(await live.oauth.grants.list(accountId)).toHaveLength(0);
    });
  });
}

lifecycle('sqlite');
lifecycle('postgres', !pgAvailable);
