/**
 * The console's Usage page for an account using a tool metered in pages beside one in records, on
 * each backend: the summary, the tables and the CSV name pages in their own column, apart from
 * records; an account that used records only sees no such column.
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
import { pageText } from './console-client-helpers.js';

const pgAvailable = await postgresAvailable();
const admin = actingAs('admin:test');
const TODAY = '2026-04-15';

function usageUnits(backend: Backend, skip = false) {
  describe.skipIf(skip)(`${backend}: usage by unit in the console`, () => {
    let c: ConsoleApp;
    beforeAll(async () => {
      c = await consoleApp(backend);
    });
    afterAll(async () => c?.close());

    async function ownerWithUsage(email: string, units: Record<string, number> | undefined) {
      const account = await c.services.accounts.create({ name: 'Scraper Co' }, admin);
      if (!account.ok) throw new Error(account.error.message);
      const accountId = account.value.id;
      await addUser(c.services, accountId, email, 'owner');
      const key = await c.services.keys.create(accountId, 'crawler');
      if (!key.ok) throw new Error(key.error.message);
      const row = { accountId, day: TODAY, keyId: key.value.id, surface: 'http' as const, failed: 0 };
      await c.store.usageHistory.add([
        { ...row, tool: 'fetch_pages', calls: 2, tokens: 40, records: 0, units, withData: 2, withoutData: 0 },
        { ...row, tool: 'lookup', calls: 1, tokens: 3, records: 3, withData: 1, withoutData: 0 },
      ]);
      const cs = c.services.console({ publicUrl: () => c.url, signup: 'closed', signupPlan: 'free' });
      const link = await cs.operatorLink(admin, email, accountId);
      if (!link.ok) throw new Error(link.error.message);
      const client = new ConsoleClient(c.url);
      await followLink(client, link.value.url);
      return { accountId, client };
    }

    it('shows pages in their own column of every table, in the summary and in the CSV', async () => {
      const { accountId, client } = await ownerWithUsage('pages@example.com', { pages: 1234 });
      const page = await client.get(`/console/a/${accountId}/usage`);
      expect(page.status).toBe(200);
      const text = pageText(page.body);
      expect(text).toContain('3 records returned, 1,234 pages returned,');
      // By day, by tool and by key: a Pages column after Records.
      expect(
        page.body.match(/<th scope="col">Records returned<\/th><th scope="col">Pages returned<\/th>/g),
      ).toHaveLength(3);
      expect(page.body).toContain(
        '<th scope="row">fetch_pages</th><td>2</td><td>0</td><td>40</td><td>0</td><td>1234</td>',
      );
      expect(page.body).toContain(
        '<th scope="row">lookup</th><td>1</td><td>0</td><td>3</td><td>3</td><td>0</td>',
      );
      const csv = await client.get(`/console/a/${accountId}/usage.csv`);
      const lines = csv.body.trimEnd().split('\r\n');
      expect(lines[0]).toBe('date,calls,tokens,records,pages,with_data,without_data,failed');
      expect(lines.at(-1)).toBe(`${TODAY},3,43,3,1234,3,0,0`);
    });

    it('adds no column for an account that used records only', async () => {
      const { accountId, client } = await ownerWithUsage('records@example.com', undefined);
      const page = await client.get(`/console/a/${accountId}/usage`);
      expect(page.body).not.toContain('Pages');
      const csv = await client.get(`/console/a/${accountId}/usage.csv`);
      expect(csv.body.split('\r\n')[0]).toBe('date,calls,tokens,records,with_data,without_data,failed');
    });
  });
}

usageUnits('sqlite');
usageUnits('postgres', !pgAvailable);
