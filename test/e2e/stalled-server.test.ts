/**
 * PostgreSQL, two real server processes, one of them stalled (SIGSTOP) while it holds an account in
 * its cache: a suspension through the other is answered all the same, once the wait for the stalled
 * one's acknowledgement runs out, with a warning that names what was not acknowledged; and the
 * stalled server, once it runs again, does not answer from what it had cached.
 */
import { describe, expect, it } from 'vitest';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore, scratchSchemaName } from '../postgres.js';
import { adminCall, E2E_ADMIN_TOKEN, getAccount } from './admin-client.js';
import { outputLine, startServer } from './process.js';

const available = await postgresAvailable();

describe.skipIf(!available)('PostgreSQL: a stalled server', () => {
  it('does not hold up a suspension for long, is named in a warning, and answers suspended once it runs again', async () => {
    const schema = scratchSchemaName();
    const env = {
      TOOLGATE_DATABASE_URL: POSTGRES_URL,
      TOOLGATE_DATABASE_SCHEMA: schema,
      TOOLGATE_KEY_SECRET: 'e2e-key-secret-0123456789abcdef0123456789',
      TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
      NODE_ENV: 'production',
    };
    const a = await startServer(env);
    const b = await startServer(env);
    try {
      const account = await adminCall(a.url, 'POST', '/accounts', { name: 'stalled' });
      expect(account.status).toBe(201);
      const id = account.body.id as string;
      const key = (await adminCall(a.url, 'POST', `/accounts/${id}/keys`, {})).body.key as string;
      // B reads (and caches) the account, then stops running: it cannot acknowledge anything.
      for (let i = 0; i < 3; i++) expect((await getAccount(b.url, key)).status).toBe(200);
      b.child.kill('SIGSTOP');
      const suspended = await adminCall(a.url, 'PATCH', `/accounts/${id}`, { status: 'suspended' });
      expect(suspended.status).toBe(200);
      const warning = await outputLine(a, 'a write was answered without every server acknowledging it');
      expect(warning).toBeDefined();
      expect(JSON.parse(warning!)).toMatchObject({ level: 40, waited_ms: 3500 });
      expect(JSON.parse(warning!).not_acknowledged_by).toMatch(/^[0-9a-f]{12}$/);
      b.child.kill('SIGCONT');
      const read = (await (await getAccount(b.url, key)).json()) as { results: { status: string } };
      expect(read.results.status).toBe('suspended');
      const metered = await adminCall(b.url, 'POST', `/accounts/${id}/usage`, { category: 'enrich' });
      expect(metered.status).toBe(403);
    } finally {
      b.child.kill('SIGCONT');
      await a.stop();
      await b.stop();
      await scratchPostgresStore(schema).cleanup();
    }
  });
});
