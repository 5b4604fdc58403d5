/**
 * Exact money under faults, with real server processes on one database (both backends): two
 * servers receiving the same events at once grant each once, and a server killed (SIGKILL)
 * between receiving an event and committing it leaves it to Stripe's retry, which then applies it
 * once. After each, the balance equals the ledger's sum.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type ServerProcess, startServer } from '../e2e/process.js';
import {
  BACKENDS,
  balanceAndLedger,
  checkoutFor,
  newAccount,
  type PaidApp,
  paidApp,
  sellPlanAndPack,
} from './paid-app.js';

describe.each(BACKENDS)('Stripe events applied exactly once on %s', (backend) => {
  let h: PaidApp;
  const servers: ServerProcess[] = [];
  afterEach(async () => {
    h.fake.release();
    await Promise.all(servers.splice(0).map((s) => s.stop()));
    await h.close();
  });

  async function serve(): Promise<ServerProcess> {
    const server = await startServer(h.serverEnv);
    servers.push(server);
    return server;
  }

  it('grants once when two servers receive the same events at once', async () => {
    h = await paidApp(backend);
    await sellPlanAndPack(h, 1000);
    const [a, b] = [await serve(), await serve()];
    const accountId = await newAccount(h);
    const packs = await Promise.all([1, 2, 3].map(() => checkoutFor(h, accountId, { topup: 'small' })));
    const events = [
      ...packs.flatMap((id) => h.fake.completeCheckout(id)),
      ...h.fake.completeCheckout(await checkoutFor(h, accountId, { plan: 'pro' })),
    ];
    for (const event of events) {
      const answers = await Promise.all(
        [a, b, a, b].map((s) => h.fake.deliver(`${s.url}/webhooks/stripe`, event)),
      );
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(answers.filter((r) => !r.body.includes('"duplicate":true'))).toHaveLength(1);
    }
    // Three packs of 500 and the first period's 1000, each once.
    expect(await balanceAndLedger(h.store, accountId)).toEqual({ balance: 2500, ledger: 2500 });
    expect((await h.store.accounts.get(accountId))!.planId).toBe('pro');
  });

  it('leaves an event a server was killed applying to the retry, which applies it once', async () => {
    h = await paidApp(backend);
    await sellPlanAndPack(h);
    const first = await serve();
    const accountId = await newAccount(h);
    const sessionId = await checkoutFor(h, accountId, { topup: 'small' });
    const [completed] = h.fake.completeCheckout(sessionId);
    // The server reads the session back from Stripe before it commits: it is killed while it waits.
    const reading = h.fake.hold(`/v1/checkout/sessions/${sessionId}`);
    const delivery = h.fake.deliver(`${first.url}/webhooks/stripe`, completed!).catch((err: Error) => err);
    await reading;
    await first.stop('SIGKILL');
    expect(await delivery).toBeInstanceOf(Error);
    h.fake.release();
    expect(await h.store.payments.seen(completed!.id)).toBe(false);
    // Stripe retries, to whichever server answers now.
    const second = await serve();
    const retried = await h.fake.deliver(`${second.url}/webhooks/stripe`, completed!);
    expect(retried.status).toBe(200);
    expect((await h.fake.deliver(`${second.url}/webhooks/stripe`, completed!)).body).toContain(
      '"duplicate":true',
    );
    expect(await balanceAndLedger(h.store, accountId)).toEqual({ balance: 500, ledger: 500 });
  });
});
