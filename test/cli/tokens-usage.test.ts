import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Scratch, scratch } from './run-cli.js';

let t: Scratch;
beforeAll(() => {
  t = scratch();
});
afterAll(() => t.cleanup());

const newAccount = async (...extra: string[]) =>
  (await t.json('accounts', 'create', '--name', 'Ledger Co', ...extra)).id as string;

describe('toolgate tokens', () => {
  it('grants and charges, and the ledger shows every entry with the balance after it', async () => {
    const id = await newAccount('--tokens', '100');
    const granted = await t.json('tokens', 'grant', id, '50', '--reason', 'top-up');
    expect(granted).toMatchObject({
      token_balance: 150,
      replayed: false,
      entry: { kind: 'grant', delta: 50 },
    });
    const charged = await t.run('tokens', 'charge', id, '30');
    expect(charged.code).toBe(0);
    expect(charged.stdout).toMatch(/^Charged 30 tokens to acc_\S+ \(led_\S+\)\. Balance: 120 tokens\.$/m);

    const ledger = await t.json<
      Array<{ kind: string; delta: number; balance_after: number; reason: string }>
    >('tokens', 'ledger', id);
    expect(ledger.map((e) => [e.kind, e.delta, e.balance_after])).toEqual([
      ['grant', 100, 100],
      ['grant', 50, 150],
      ['charge', -30, 120],
    ]);
    const human = await t.run('tokens', 'ledger', id);
    expect(human.stdout).toMatch(/^CREATED\s+KIND\s+CHANGE\s+BALANCE\s+REASON/m);
    expect(human.stdout).toMatch(/grant\s+\+50\s+150\s+top-up/);
  });

  it('refuses a charge the balance cannot cover with exit 1, and changes nothing', async () => {
    const id = await newAccount('--tokens', '10');
    const r = await t.run('tokens', 'charge', id, '11');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('toolgate: The account has 10 tokens; 11 cannot be charged.\n');
    const j = await t.run('tokens', 'charge', id, '11', '--json');
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({
      status: 'error',
      error: 'Payment Required',
      code: 'insufficient_tokens',
      token_balance: 10,
    });
    expect((await t.json('accounts', 'show', id)).token_balance).toBe(10);
  });

  it('applies an idempotency key once: the replay answers the same entry and is flagged', async () => {
    const id = await newAccount('--tokens', '100');
    const first = await t.json('tokens', 'charge', id, '25', '--idempotency-key', 'order-1');
    const again = await t.json('tokens', 'charge', id, '25', '--idempotency-key', 'order-1');
    expect(first.replayed).toBe(false);
    expect(again).toEqual({ ...first, replayed: true });
    expect((await t.json('accounts', 'show', id)).token_balance).toBe(75);
    const human = await t.run('tokens', 'charge', id, '25', '--idempotency-key', 'order-1');
    expect(human.stdout).toContain('already applied under idempotency key "order-1"');

    const conflict = await t.run('tokens', 'charge', id, '26', '--idempotency-key', 'order-1', '--json');
    expect(conflict.code).toBe(1);
    expect(JSON.parse(conflict.stdout).code).toBe('idempotency_conflict');
  });

  it('adjusts by a signed amount and charges nothing to an unlimited account', async () => {
    const id = await newAccount('--tokens', '20');
    expect(await t.json('tokens', 'adjust', id, '-5')).toMatchObject({ token_balance: 15 });
    const unlimited = await newAccount('--unlimited');
    const r = await t.run('tokens', 'charge', unlimited, '1000');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('is unlimited: nothing charged');
  });

  it('rejects amounts that are not positive whole numbers with exit 2, and unknown accounts with exit 1', async () => {
    const id = await newAccount();
    const bads = ['0', '-3', 'ten', '2.5'];
    const results = await Promise.all(bads.map((bad) => t.run('tokens', 'grant', id, bad)));
    results.forEach((r, i) => {
      expect(r.code, bads[i]).toBe(2);
      expect(r.stderr, bads[i]).toContain('<amount> must be a whole number from 1');
    });
    expect((await t.run('tokens', 'adjust', id, '0')).code).toBe(2);
    const missing = await t.run('tokens', 'ledger', 'acc_nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('toolgate: No account "acc_nope".\n');
  });
});

describe('toolgate plans', () => {
  it('lists the default catalogue', async () => {
    const plans = await t.json<Array<{ id: string; unlimited: boolean }>>('plans', 'list');
    expect(plans.map((p) => [p.id, p.unlimited])).toEqual([
      ['free', false],
      ['subscription_27', false],
      ['subscription_97', true],
    ]);
    const human = await t.run('plans', 'list');
    expect(human.stdout).toMatch(/^free\s+no\s+none\s+-\s+-$/m);
    // The limits: one row per meter, one column per plan.
    expect(human.stdout).toMatch(/^LIMIT\s+free\s+subscription_27\s+subscription_97$/m);
    expect(human.stdout).toMatch(/^enrich records 5h\s+100\s+1000\s+15000$/m);
    expect(human.stdout).toMatch(/^search requests 5h\s+250\s+2500\s+37500$/m);
  });

  it('creates a plan only when every limit is named, then changes some limits of it', async () => {
    const partial = await t.run('plans', 'set', 'tiny', 'enrich.records.5h=10');
    expect(partial.code).toBe(2);
    expect(partial.stderr).toContain('missing: enrich.records.1w');

    const tiny = await t.json(
      'plans',
      'set',
      'tiny',
      'enrich.records.5h=10',
      'enrich.records.1w=20',
      'enrich.requests.5h=5',
      'search.records.5h=3',
      'search.records.1w=6',
      'search.requests.5h=4',
    );
    expect(tiny).toEqual({
      id: 'tiny',
      unlimited: false,
      limits: {
        enrich: { records: { '5h': 10, '1w': 20 }, requests: { '5h': 5 } },
        search: { records: { '5h': 3, '1w': 6 }, requests: { '5h': 4 } },
      },
      subscription: null,
      stripe_price: null,
      period_tokens: null,
      name: null,
      description: null,
    });
    const changed = await t.json('plans', 'set', 'tiny', 'search.records.5h=5', '--unlimited');
    expect(changed.unlimited).toBe(true);
    expect(changed.limits.search.records['5h']).toBe(5);
    expect(changed.limits.enrich.records['5h']).toBe(10);
    expect((await t.json('plans', 'set', 'tiny', '--no-unlimited')).unlimited).toBe(false);

    const bad = await t.run('plans', 'set', 'tiny', 'enrich.records=5');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('must look like enrich.records.5h=1000');
  });
});

describe('toolgate usage record', () => {
  it('consumes records and a request, and prints the windows after it', async () => {
    const id = await newAccount();
    const answer = await t.json('usage', 'record', id, '--category', 'enrich', '--records', '7');
    expect(answer).toMatchObject({
      account_id: id,
      category: 'enrich',
      recorded: { records: 7, requests: 1 },
    });
    expect(answer.fair_use.enrich.records['5h']).toMatchObject({ limit: 100, used: 7, remaining: 93 });
    expect(answer.fair_use.enrich.records['1w']).toMatchObject({ limit: 500, used: 7, remaining: 493 });
    expect(answer.fair_use.enrich.requests['5h']).toMatchObject({ limit: 500, used: 1, remaining: 499 });
    expect(answer.fair_use.enrich.records['5h'].resets_at).toMatch(/Z$/);
    expect(answer.metadata.fair_use.records_remaining_5h).toBe(93);

    const human = await t.run('usage', 'record', id, '--category', 'enrich', '--records', '33');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      /enrich records 5h\s+\[####------\]\s+40\/100 used, 60 left, resets \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/,
    );
  });

  it("records a unit of a plan's own meters, and prints its windows", async () => {
    expect((await t.run('plans', 'set', 'team', 'scrape.pages.1d=100', 'scrape.requests.1h=10')).code).toBe(
      0,
    );
    const id = await newAccount('--plan', 'team');
    const answer = await t.json(
      'usage',
      'record',
      id,
      '--category',
      'scrape',
      '--unit',
      'pages',
      '--amount',
      '40',
    );
    expect(answer.recorded).toEqual({ pages: 40, requests: 1 });
    expect(answer.fair_use.scrape.pages['1d']).toMatchObject({ limit: 100, used: 40, remaining: 60 });
    const human = await t.run(
      'usage',
      'record',
      id,
      '--category',
      'scrape',
      '--unit',
      'pages',
      '--amount',
      '1',
    );
    expect(human.stdout).toContain(`Recorded scrape for ${id}: 1 page, 1 request. Windows now:`);
    expect(human.stdout).toMatch(/scrape pages 1d\s+\[####------\]\s+41\/100 used, 59 left/);
    expect(human.stdout).toMatch(/scrape requests 1h\s+\[##--------\]\s+2\/10 used/);
    const unknown = await t.run(
      'usage',
      'record',
      id,
      '--category',
      'scrape',
      '--unit',
      'messages',
      '--amount',
      '1',
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unit must be one of pages, requests for scrape (got "messages").');
  });

  it('refuses a consumption past a limit with exit 1 and the error body, recording nothing', async () => {
    const id = await newAccount('--plan', 'tiny');
    await t.json('usage', 'record', id, '--category', 'search', '--records', '4');
    const r = await t.run('usage', 'record', id, '--category', 'search', '--records', '2', '--json');
    expect(r.code).toBe(1);
    const body = JSON.parse(r.stdout);
    expect(body).toMatchObject({
      status: 'error',
      error: 'Too Many Requests',
      code: 'fair_use_exceeded',
      window: 'search.records.5h',
      limit: 5,
      used: 4,
    });
    expect(body.resets_at).toMatch(/Z$/);
    const human = await t.run('usage', 'record', id, '--category', 'search', '--records', '2');
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(
      /^toolgate: Fair-use quota search\.records\.5h \(limit 5\) would be exceeded/,
    );
    const after = await t.json('accounts', 'show', id);
    expect(after.fair_use.search.records['5h'].used).toBe(4);
    expect(after.fair_use.search.requests['5h'].used).toBe(1);
  });

  it('counts an idempotent consumption once', async () => {
    const id = await newAccount();
    const args = [
      'usage',
      'record',
      id,
      '--category',
      'search',
      '--records',
      '3',
      '--idempotency-key',
      'job-9',
    ];
    const first = await t.json(...args);
    const again = await t.json(...args);
    expect(again).toEqual(first);
    expect((await t.json('accounts', 'show', id)).fair_use.search.records['5h'].used).toBe(3);
    const human = await t.run(...args);
    expect(human.stdout).toContain('counted once');
  });

  it('rejects a bad category or amount with exit 2', async () => {
    const id = await newAccount();
    const cases = [
      ['usage', 'record', id, '--category', 'crawl'],
      ['usage', 'record', id],
      ['usage', 'record', id, '--category', 'enrich', '--records', '-1'],
      ['usage', 'record', id, '--category', 'enrich', '--records', 'many'],
      ['usage', 'record', id, '--category', 'enrich', '--requests', '0'],
    ];
    const results = await Promise.all(cases.map((args) => t.run(...args)));
    results.forEach((r, i) => {
      expect(r.code, cases[i]!.join(' ')).toBe(2);
      expect(r.stderr, cases[i]!.join(' ')).toMatch(/^toolgate: \S/);
    });
  });
});
