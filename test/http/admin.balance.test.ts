/**
 * The token balance is bounded: at most 2^53 - 1 (Number.MAX_SAFE_INTEGER), so every balance and
 * ledger figure is exact in JSON and JavaScript. On SQLite and PostgreSQL: an account granted up to
 * the maximum by 10^12 at a time (what one grant may be) refuses a grant or adjustment past it with
 * 400 naming the maximum, charges still move it, and under concurrent grants and charges the
 * balance always equals the ledger's sum.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BALANCE, MAX_TOKENS } from '../../src/domain/ledger.js';
import { type BackendApp, backends } from './admin.backends.js';
import { admin } from './admin.test-helpers.js';

/** Runs `task` for 0..n-1, `width` at a time. */
async function inParallel(n: number, width: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

for (const backend of await backends()) {
  describe(`the token balance's maximum, on ${backend.name}`, () => {
    let h: BackendApp;
    let account: string;
    const a = () => admin(h);
    const tokens = (body: Record<string, unknown>) => a().post(`/accounts/${account}/tokens`, body);
    const balance = async () => (await a().get(`/accounts/${account}`)).json().token_balance as number;
    /** The ledger's entries summed, in order: every partial sum is a balance, so exact. */
    const ledgerSum = async () => {
      const entries = await h.store.ledger.list(account, { limit: 100_000 });
      return { sum: entries.reduce((s, e) => s + e.delta, 0), count: entries.length, entries };
    };

    beforeAll(async () => {
      h = await backend.make();
      account = (await a().post('/accounts', { name: 'Rich' })).json().id;
      // Up to the maximum as an operator would get there: grants of 10^12, the most one grant may be.
      const whole = Math.floor(MAX_BALANCE / MAX_TOKENS);
      await inParallel(whole, 16, async () => {
        const res = await tokens({ kind: 'grant', amount: MAX_TOKENS });
        if (res.statusCode !== 201) throw new Error(`grant answered ${res.statusCode} ${res.body}`);
      });
      const rest = await tokens({ kind: 'grant', amount: MAX_BALANCE - whole * MAX_TOKENS });
      expect(rest.statusCode).toBe(201);
    }, 300_000);
    afterAll(async () => {
      await h?.close();
    });

    it('reaches exactly the maximum, and the ledger sums to it', async () => {
      expect(await balance()).toBe(MAX_BALANCE);
      expect((await ledgerSum()).sum).toBe(MAX_BALANCE);
    });

    it('refuses a grant or an adjustment past it with 400 naming the maximum, and changes nothing', async () => {
      const before = await ledgerSum();
      for (const body of [
        { kind: 'grant', amount: 1 },
        { kind: 'adjust', amount: 1 },
        { kind: 'grant', amount: MAX_TOKENS, idempotency_key: 'past-the-top' },
      ]) {
        const res = await tokens(body);
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json()).toMatchObject({ code: 'invalid_arguments', token_balance: MAX_BALANCE });
        expect(res.json().message).toContain(String(MAX_BALANCE));
      }
      expect(await balance()).toBe(MAX_BALANCE);
      const after = await ledgerSum();
      expect(after.count).toBe(before.count);
      // A refused idempotency key is not spent: the same request may be sent again once it fits.
      expect(after.entries.some((e) => e.idempotencyKey === 'past-the-top')).toBe(false);
    });

    it('moves it by a charge of 1, the entry and the balance exact', async () => {
      const res = await tokens({ kind: 'charge', amount: 1 });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({
        token_balance: MAX_BALANCE - 1,
        entry: { delta: -1, balance_after: MAX_BALANCE - 1 },
      });
      expect(await balance()).toBe(MAX_BALANCE - 1);
      expect((await ledgerSum()).sum).toBe(MAX_BALANCE - 1);
    });

    it('under concurrent grants and charges near it: the balance stays within it and equals the ledger sum', async () => {
      // 100 grants' worth of room, then 180 grants and 20 charges of 10^12 at once: whatever their
      // order, at least 60 grants cannot fit.
      for (let i = 0; i < 100; i++) await tokens({ kind: 'charge', amount: MAX_TOKENS });
      const start = await balance();
      expect(start).toBe(MAX_BALANCE - 1 - 100 * MAX_TOKENS);
      const answers = new Map<string, number>();
      const kinds = Array.from({ length: 200 }, (_, i) => (i % 10 === 9 ? 'charge' : 'grant'));
      await inParallel(kinds.length, 16, async (i) => {
        const res = await tokens({ kind: kinds[i], amount: MAX_TOKENS });
        const what = `${kinds[i]} ${res.statusCode}`;
        answers.set(what, (answers.get(what) ?? 0) + 1);
      });
      expect([...answers.keys()].sort()).toEqual(
        expect.arrayContaining(['charge 201', 'grant 201', 'grant 400']),
      );
      for (const what of answers.keys()) expect(['charge 201', 'grant 201', 'grant 400']).toContain(what);
      const final = await balance();
      expect(final).toBeLessThanOrEqual(MAX_BALANCE);
      expect(final - start).toBe(
        ((answers.get('grant 201') ?? 0) - (answers.get('charge 201') ?? 0)) * MAX_TOKENS,
      );
      expect((await ledgerSum()).sum).toBe(final);
    });
  });
}
