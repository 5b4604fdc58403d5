/**
 * `PATCH /admin/v1/users/{user_id}` on SQLite and PostgreSQL: an operator changes a user's role,
 * audited as user.role; the account keeps at least one owner; a bad role and an unknown user are
 * refused in the use case's words, and a refusal changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BackendApp, backends } from './admin.backends.js';
import { admin } from './admin.test-helpers.js';

for (const backend of await backends()) {
  describe(`admin API: a user's role, on ${backend.name}`, () => {
    let h: BackendApp;
    let account: string;
    let ann: string;
    let bob: string;
    const a = () => admin(h);
    const role = (id: string, body: unknown) => a().patch(`/users/${id}`, body);
    const roles = async () =>
      Object.fromEntries(
        ((await a().get(`/accounts/${account}/users`)).json().data as { email: string; role: string }[]).map(
          (u) => [u.email, u.role],
        ),
      );
    const trail = async () =>
      ((await a().get(`/audit?account_id=${account}`)).json().data as { action: string }[]).filter(
        (e) => e.action === 'user.role',
      );

    beforeAll(async () => {
      h = await backend.make();
      account = (await a().post('/accounts', { name: 'Roles' })).json().id;
      ann = (await a().post(`/accounts/${account}/users`, { email: 'ann@example.com', role: 'owner' })).json()
        .id;
      bob = (await a().post(`/accounts/${account}/users`, { email: 'bob@example.com' })).json().id;
    });
    afterAll(async () => {
      await h?.close();
    });

    it('makes a member an owner, then the first owner a member, each audited as user.role', async () => {
      const promoted = await role(bob, { role: 'owner' });
      expect(promoted.statusCode).toBe(200);
      expect(promoted.json()).toMatchObject({
        id: bob,
        account_id: account,
        email: 'bob@example.com',
        role: 'owner',
      });
      expect((await role(ann, { role: 'member' })).json()).toMatchObject({ id: ann, role: 'member' });
      expect(await roles()).toEqual({ 'ann@example.com': 'member', 'bob@example.com': 'owner' });
      expect(await trail()).toMatchObject([
        { actor: 'admin:admin', target_id: bob, details: { email: 'bob@example.com', role: 'owner' } },
        { actor: 'admin:admin', target_id: ann, details: { email: 'ann@example.com', role: 'member' } },
      ]);
    });

    it('answers the user as it is for the role it has already, and audits nothing', async () => {
      expect((await role(bob, { role: 'owner' })).json()).toMatchObject({ id: bob, role: 'owner' });
      expect(await trail()).toHaveLength(2);
    });

    it('refuses to leave the account without an owner (409), changing nothing', async () => {
      const refused = await role(bob, { role: 'member' });
      expect(refused.statusCode).toBe(409);
      expect(refused.json()).toMatchObject({
        code: 'conflict',
        message: 'An account keeps at least one owner.',
      });
      expect(await roles()).toEqual({ 'ann@example.com': 'member', 'bob@example.com': 'owner' });
      expect(await trail()).toHaveLength(2);
    });

    it('refuses a role that is not one (400) and an unknown user (404)', async () => {
      const bad = await role(ann, { role: 'admin' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toMatchObject({
        code: 'invalid_arguments',
        message: 'role must be one of owner, member.',
      });
      expect((await role(ann, {})).statusCode).toBe(400);
      expect((await role(ann, { role: 'owner', email: 'x@example.com' })).statusCode).toBe(400);
      const unknown = await role('usr_nope', { role: 'owner' });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toMatchObject({ code: 'not_found', message: 'No user "usr_nope".' });
      expect(await roles()).toEqual({ 'ann@example.com': 'member', 'bob@example.com': 'owner' });
      expect(await trail()).toHaveLength(2);
    });
  });
}
