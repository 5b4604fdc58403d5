/**
 * Issue 52, row 4: nothing is created in a suspended or closed account from the console (a key, a
 * member), and its pages say so. On each backend, through the console's own sign-in and forms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actingAs } from '../../src/service/audit.js';
import { postgresAvailable } from '../postgres.js';
import {
  addUser,
  type Backend,
  type ConsoleApp,
  ConsoleClient,
  consoleApp,
  followLink,
} from './console-app-helpers.js';
import { formWithButton, pageText } from './console-client-helpers.js';

const pgAvailable = await postgresAvailable();
const admin = actingAs('admin:test');

function statuses(backend: Backend, skip = false) {
  describe.skipIf(skip)(`${backend}: suspended and closed accounts in the console`, () => {
    let c: ConsoleApp;
    beforeAll(async () => {
      c = await consoleApp(backend);
    });
    afterAll(async () => c?.close());

    async function ownerOf(status: 'suspended' | 'closed', email: string) {
      const account = await c.services.accounts.create({ name: `Acme ${status}` }, admin);
      if (!account.ok) throw new Error(account.error.message);
      const accountId = account.value.id;
      await addUser(c.services, accountId, email, 'owner');
      const cs = c.services.console({ publicUrl: () => c.url, signup: 'closed', signupPlan: 'free' });
      const link = await cs.operatorLink(admin, email, accountId);
      if (!link.ok) throw new Error(link.error.message);
      const client = new ConsoleClient(c.url);
      await followLink(client, link.value.url);
      expect((await c.services.accounts.update(accountId, { status }, admin)).ok).toBe(true);
      return { accountId, client };
    }

    it('a suspended account: the banner, no key, no invitation', async () => {
      const { accountId, client } = await ownerOf('suspended', 'sue@example.com');
      const keysBefore = (await c.store.keys.list(accountId)).length;
      const keys = await client.get(`/console/a/${accountId}/keys`);
      expect(pageText(keys.body)).toContain('This account is suspended');
      const created = await client.submit(formWithButton(keys, 'Create key'), { name: 'new' });
      expect(created.status).toBe(400);
      expect(pageText(created.body)).toContain('The account is suspended; it cannot have new keys.');
      expect(await c.store.keys.list(accountId)).toHaveLength(keysBefore);

      const members = await client.get(`/console/a/${accountId}/members`);
      const invited = await client.submit(formWithButton(members, /invite/i), { email: 'new@example.com' });
      expect(invited.status).toBe(400);
      expect(pageText(invited.body)).toContain('suspended or closed');
      expect((await c.store.users.list(accountId)).map((u) => u.email)).toEqual(['sue@example.com']);
    });

    it('a closed account: every page says it is closed, and nothing is added', async () => {
      const { accountId, client } = await ownerOf('closed', 'cal@example.com');
      for (const path of ['', 'usage', 'keys', 'billing', 'members', 'connect', 'connected-apps']) {
        const page = await client.get(`/console/a/${accountId}/${path}`);
        expect([path, page.status]).toEqual([path, 200]);
        expect(pageText(page.body)).toContain('This account is closed');
      }
      const keys = await client.get(`/console/a/${accountId}/keys`);
      const created = await client.submit(formWithButton(keys, 'Create key'), { name: 'new' });
      expect(created.status).toBe(400);
      expect(await c.store.keys.list(accountId)).toHaveLength(0);
      const members = await client.get(`/console/a/${accountId}/members`);
      const invited = await client.submit(formWithButton(members, /invite/i), { email: 'new@example.com' });
      expect(invited.status).toBe(400);
      expect((await c.store.users.list(accountId)).map((u) => u.email)).toEqual(['cal@example.com']);
    });
  });
}

statuses('sqlite');
statuses('postgres', !pgAvailable);
