import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assertNoCredentials } from '../../src/domain/audit.js';
import { actingAs } from '../../src/service/audit.js';
import { type Harness, scratchServices } from '../helpers.js';

describe('services acting as someone', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await scratchServices();
  });
  afterEach(async () => h.close());

  const trail = async () => {
    const listed = await h.services.audit.list({ limit: 100 });
    if (!listed.ok) throw new Error(listed.error.message);
    return listed.value;
  };

  it('audit under the actor each call is given; a call given none audits nothing', async () => {
    const bare = await h.services.accounts.create({ name: 'Internal' });
    expect(bare.ok).toBe(true);
    expect(await trail()).toEqual([]);

    const ops = actingAs('admin:ops');
    const acc = await h.services.accounts.create({ name: 'Acme', tokens: 5 }, ops);
    if (!acc.ok) throw new Error(acc.error.message);
    await h.services.tokens.apply(acc.value.id, { kind: 'grant', amount: 1 }, actingAs('cli:ann'));
    expect((await trail()).map((e) => [e.actor, e.action])).toEqual([
      ['admin:ops', 'account.create'],
      ['cli:ann', 'tokens.grant'],
    ]);
    // A change given no one acting is not audited.
    await h.services.tokens.apply(acc.value.id, { kind: 'grant', amount: 1 });
    expect(await trail()).toHaveLength(2);
  });

  it('never audit metering (meter, the usage endpoint), even when acting as someone; the CLI record is audited', async () => {
    const ops = actingAs('admin:ops');
    const acc = await h.services.accounts.create({ name: 'Acme', tokens: 5 }, ops);
    if (!acc.ok) throw new Error(acc.error.message);
    const snapshot = await h.store.accounts.snapshot(acc.value.id);
    const metered = await h.services.usage.meter({
      snapshot: snapshot!,
      category: 'enrich',
      amounts: { records: 1, requests: 1 },
      tokenCost: 1,
      render: () => null,
    });
    expect(metered.ok).toBe(true);
    expect((await trail()).map((e) => e.action)).toEqual(['account.create']);
    // The usage endpoint's record is metering traffic too: not audited.
    expect((await h.services.usage.record(acc.value.id, { category: 'enrich', records: 1 })).ok).toBe(true);
    expect((await trail()).map((e) => e.action)).toEqual(['account.create']);
    // The CLI's, an operator's hand, is.
    await h.services.usage.record(acc.value.id, { category: 'enrich', records: 1 }, ops);
    expect((await trail()).map((e) => e.action)).toEqual(['account.create', 'usage.record']);
  });
});

describe('audit details', () => {
  it('refuse members named like a credential, at any depth', () => {
    expect(assertNoCredentials({ name: 'ci', idempotency_key: 'k', tokens: 5 })).toEqual({
      name: 'ci',
      idempotency_key: 'k',
      tokens: 5,
    });
    expect(() => assertNoCredentials({ key: 'tg_abc' })).toThrow(/key/);
    expect(() => assertNoCredentials({ nested: [{ digest: 'x' }] })).toThrow(/digest/);
    expect(() => assertNoCredentials({ Secret: 'x' })).toThrow(/Secret/);
  });
});
