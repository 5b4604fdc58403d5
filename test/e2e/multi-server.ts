/**
 * Two real server processes on one database, written once and run per backend: what holds on one
 * server must hold across servers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCall, E2E_ADMIN_TOKEN, getAccount, planWithLimit } from './admin-client.js';
import { type ServerProcess, startServer } from './process.js';

/** { status: count }, so a failure shows every status that came back. */
function tally(statuses: number[]): Record<number, number> {
  const t: Record<number, number> = {};
  for (const s of statuses) t[s] = (t[s] ?? 0) + 1;
  return t;
}

export interface Backend {
  /** Environment naming the database (and what else the backend needs). */
  env: Record<string, string>;
  cleanup(): Promise<void> | void;
}

export function multiServerSuite(name: string, makeBackend: () => Promise<Backend>) {
  describe(`two servers on one ${name} database`, () => {
    let backend: Backend;
    let a: ServerProcess;
    let b: ServerProcess;

    beforeAll(async () => {
      backend = await makeBackend();
      const env = {
        ...backend.env,
        TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
      };
      // The first migrates; the second finds nothing to do.
      a = await startServer(env);
      b = await startServer(env);
      expect((await adminCall(a.url, 'PUT', '/plans/hundred', planWithLimit(100))).status).toBe(200);
    });
    afterAll(async () => {
      await a?.stop();
      await b?.stop();
      await backend?.cleanup();
    });

    const newAccount = async (body: Record<string, unknown>) => {
      const res = await adminCall(a.url, 'POST', '/accounts', body);
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const newKey = async (accountId: string) => {
      const res = await adminCall(b.url, 'POST', `/accounts/${accountId}/keys`, {});
      expect(res.status).toBe(201);
      return res.body as { id: string; key: string };
    };

    it('300 concurrent consumptions of 1 on a limit of 100 grant exactly 100 and refuse 200 (one server)', async () => {
      const id = await newAccount({ name: 'race-1', plan: 'hundred' });
      const answers = await Promise.all(
        Array.from({ length: 300 }, () =>
          adminCall(a.url, 'POST', `/accounts/${id}/usage`, { category: 'enrich', requests: 1, records: 0 }),
        ),
      );
      const statuses = answers.map((r) => r.status);
      expect(tally(statuses)).toEqual({ 200: 100, 429: 200 });
      for (const r of answers.filter((x) => x.status === 429))
        expect(r.body.window).toBe('enrich.requests.5h');
      const account = await adminCall(a.url, 'GET', `/accounts/${id}`);
      expect(account.body.fair_use.enrich.requests['5h']).toMatchObject({ used: 100, remaining: 0 });
    });

    it('300 concurrent consumptions spread over both servers grant exactly 100', async () => {
      const id = await newAccount({ name: 'race-2', plan: 'hundred' });
      const answers = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          adminCall(i % 2 ? a.url : b.url, 'POST', `/accounts/${id}/usage`, {
            category: 'enrich',
            records: 1,
          }),
        ),
      );
      const statuses = answers.map((r) => r.status);
      expect(tally(statuses)).toEqual({ 200: 100, 429: 200 });
      const windows = (await adminCall(b.url, 'GET', `/accounts/${id}`)).body.fair_use.enrich;
      expect(windows.records['5h'].used).toBe(100);
      expect(windows.records['1w'].used).toBe(100);
      expect(windows.requests['5h'].used).toBe(100);
    });

    it("300 concurrent consumptions of a meter of the operator's own (pages a day) over both servers grant exactly 100", async () => {
      const plan = { limits: { scrape: { pages: { '1d': 100 } } } };
      expect((await adminCall(a.url, 'PUT', '/plans/pages', plan)).status).toBe(200);
      const id = await newAccount({ name: 'race-pages', plan: 'pages' });
      const answers = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          adminCall(i % 2 ? a.url : b.url, 'POST', `/accounts/${id}/usage`, {
            category: 'scrape',
            unit: 'pages',
            amount: 1,
          }),
        ),
      );
      expect(tally(answers.map((r) => r.status))).toEqual({ 200: 100, 429: 200 });
      for (const r of answers.filter((x) => x.status === 429)) expect(r.body.window).toBe('scrape.pages.1d');
      const account = await adminCall(b.url, 'GET', `/accounts/${id}`);
      expect(account.body.fair_use).toEqual({
        scrape: { pages: { '1d': expect.objectContaining({ limit: 100, used: 100, remaining: 0 }) } },
      });
    });

    it('one idempotency key retried concurrently on both servers counts once and answers the same', async () => {
      const id = await newAccount({ name: 'idem', plan: 'hundred' });
      const body = { category: 'enrich', records: 3, idempotency_key: 'retry-me' };
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          adminCall(i % 2 ? a.url : b.url, 'POST', `/accounts/${id}/usage`, body),
        ),
      );
      expect(answers.every((r) => r.status === 200)).toBe(true);
      expect(new Set(answers.map((r) => JSON.stringify(r.body))).size).toBe(1);
      const windows = (await adminCall(a.url, 'GET', `/accounts/${id}`)).body.fair_use.enrich;
      expect(windows.records['5h'].used).toBe(3);
      expect(windows.requests['5h'].used).toBe(1);
    });

    it('concurrent token charges never take the balance below 0, and each idempotency key counts once', async () => {
      const id = await newAccount({ name: 'charges', tokens: 100 });
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          adminCall(i % 2 ? a.url : b.url, 'POST', `/accounts/${id}/tokens`, { kind: 'charge', amount: 3 }),
        ),
      );
      expect(answers.filter((r) => r.status === 201)).toHaveLength(33);
      expect(answers.filter((r) => r.status === 402)).toHaveLength(27);
      expect((await adminCall(a.url, 'GET', `/accounts/${id}`)).body.token_balance).toBe(1);

      const again = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          adminCall(i % 2 ? a.url : b.url, 'POST', `/accounts/${id}/tokens`, {
            kind: 'grant',
            amount: 5,
            idempotency_key: 'g-1',
          }),
        ),
      );
      expect(again.filter((r) => r.status === 201)).toHaveLength(1);
      expect(again.filter((r) => r.status === 200 && r.body.replayed)).toHaveLength(19);
      expect((await adminCall(b.url, 'GET', `/accounts/${id}`)).body.token_balance).toBe(6);
      const ledger = (await adminCall(a.url, 'GET', `/accounts/${id}/tokens?limit=500`)).body.data;
      expect(ledger.filter((e: { kind: string }) => e.kind === 'charge')).toHaveLength(33);
      expect(ledger.filter((e: { kind: string }) => e.kind === 'grant')).toHaveLength(2);
    });

    it('a key revoked through one server is refused by the other on its next request', async () => {
      const id = await newAccount({ name: 'revoke' });
      const { id: keyId, key } = await newKey(id);
      // B has authenticated (and may have cached) the key before it is revoked.
      for (let i = 0; i < 3; i++) expect((await getAccount(b.url, key)).status).toBe(200);
      expect((await adminCall(a.url, 'DELETE', `/keys/${keyId}`)).status).toBe(200);
      const refused = await getAccount(b.url, key);
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { code: string }).code).toBe('invalid_api_key');
    });

    it('a consumption made on one server is seen in get_account on the other', async () => {
      const id = await newAccount({ name: 'seen', plan: 'hundred' });
      const { key } = await newKey(id);
      const used = async () =>
        (
          (await (await getAccount(b.url, key)).json()) as {
            results: { fair_use: { enrich: { records: { '5h': { used: number } } } } };
          }
        ).results.fair_use.enrich.records['5h'].used;
      expect(await used()).toBe(0);
      expect(await used()).toBe(0);
      expect(
        (await adminCall(a.url, 'POST', `/accounts/${id}/usage`, { category: 'enrich', records: 4 })).status,
      ).toBe(200);
      expect(await used()).toBe(4);
    });

    it('a suspension made on one server is seen by the other', async () => {
      const id = await newAccount({ name: 'suspend', plan: 'hundred' });
      const { key } = await newKey(id);
      // B has read (and may have cached) the account before the change.
      for (let i = 0; i < 3; i++) expect((await getAccount(b.url, key)).status).toBe(200);
      expect((await adminCall(a.url, 'PATCH', `/accounts/${id}`, { status: 'suspended' })).status).toBe(200);
      const read = (await (await getAccount(b.url, key)).json()) as { results: { status: string } };
      expect(read.results.status).toBe('suspended');
      const metered = await adminCall(b.url, 'POST', `/accounts/${id}/usage`, { category: 'enrich' });
      expect(metered.status).toBe(403);
      expect(metered.body.code).toBe('account_suspended');
    });
  });
}
