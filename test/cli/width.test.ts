/**
 * Every table of the CLI in an 80-column terminal (`COLUMNS=80`), as the built CLI prints it on a
 * scratch SQLite file filled with realistic long names, emails, reasons, URLs and tool names: no
 * line is wider than 80, ids are shortened (`acc_…tbgm0q`) before a name is cut, usage by key names
 * the keys, and `--json` keeps every value whole.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageRow } from '../../src/domain/usage-history.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { type Scratch, scratch } from './run-cli.js';

const ACME = 'Acme Corporation International Holdings';
const OWNER = 'alexandra.konstantinopoulou@engineering.acme-corporation.example.com';
const KEY_NAME = 'production server eu-west-1';
const TOOL = 'search_companies_by_domain_name';
const ID = /\b(acc|key|usr|led|whe|whd|aud)_[0-9a-z]{26}\b/;

let t: Scratch;
let acme: string;
let key: string;
let endpoint: string;

/** `toolgate <args>` for people at 80 columns: exit 0, and every line 80 characters at most. */
async function fits(...args: string[]): Promise<string> {
  const r = await t.run(...args);
  expect(r.code, `toolgate ${args.join(' ')}: ${r.stderr}`).toBe(0);
  for (const line of r.stdout.split('\n'))
    expect(line.length, `toolgate ${args.join(' ')}:\n${r.stdout}`).toBeLessThanOrEqual(80);
  return r.stdout;
}

async function seed(): Promise<void> {
  acme = (await t.json('accounts', 'create', '--name', ACME, '--plan', 'subscription_27', '--tokens', '5000'))
    .id;
  await t.json('accounts', 'create', '--name', 'Globex');
  key = (await t.json('keys', 'create', acme, '--name', KEY_NAME)).id;
  await t.json('keys', 'create', acme, '--name', 'ci');
  await t.json('users', 'add', acme, '--email', OWNER, '--role', 'owner');
  await t.json('users', 'add', acme, '--email', 'bob@acme.example');
  await t.json(
    'tokens',
    'grant',
    acme,
    '100',
    '--reason',
    'welcome bonus for the enterprise pilot programme',
    '--idempotency-key',
    'invoice-2026-000123-enterprise-pilot',
  );
  await t.json('plans', 'set', 'team', 'scrape.pages.1d=2000', 'scrape.requests.1h=100');
  await t.json('plans', 'set', 'enterprise_unlimited_2026', 'scrape.pages.1d=50000', '--unlimited');
  const catalogue = join(t.dir, 'catalogue.json');
  writeFileSync(
    catalogue,
    JSON.stringify({
      tools: [
        {
          name: TOOL,
          description: 'Companies by their web domain.',
          input_schema: { type: 'object' },
          upstream: { url: 'https://companies.internal.example.com/api/v2/search/by-domain-name' },
          metering: { category: 'search', tokens_per_call: 2, tokens_per_record: 1 },
        },
      ],
    }),
  );
  await t.json('tools', 'import', catalogue);
  endpoint = (
    await t.json(
      'webhooks',
      'add',
      '--url',
      'http://127.0.0.1:9/toolgate/events/production/receiver',
      '--account',
      acme,
    )
  ).id;
  // Nothing listens on port 9: a delivery that failed, with its error.
  await t.run('webhooks', 'test', endpoint);

  const store = new SqliteStore({ path: join(t.dir, 't.db') });
  try {
    const row = (day: string, tool: string, calls: number): UsageRow => ({
      accountId: acme,
      day,
      keyId: key,
      tool,
      surface: 'http',
      calls,
      tokens: 2 * calls,
      records: calls,
      withData: calls,
      withoutData: 0,
      failed: 0,
    });
    await store.usageHistory.add([row('2026-04-10', TOOL, 120), row('2026-04-11', 'lookup', 3)]);
    const now = Math.floor(Date.now() / 1000);
    await store.payments.putTopup({
      id: 'pack_10000_tokens',
      tokens: 10000,
      stripePrice: 'price_1MoBy5LkdIwHu7ixZhnattbh',
      createdAt: now,
      updatedAt: now,
    });
    await store.payments.note({
      id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy',
      type: 'customer.subscription.updated',
      accountId: acme,
      receivedAt: now,
      outcome: 'unknown_price',
      detail: 'price_1MoBy5LkdIwHu7ixZhnattbh sells no plan of this server',
    });
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  t = scratch({ COLUMNS: '80', TOOLGATE_WEBHOOK_ALLOW_PRIVATE: 'true' });
  await seed();
}, 120_000);
afterAll(() => t.cleanup());

const RANGE = ['--from', '2026-04-09', '--to', '2026-04-12'];

describe('every table at COLUMNS=80', { timeout: 120_000 }, () => {
  it('accounts list: ids shortened, optional columns left out and named, then the name cut', async () => {
    const out = await fits('accounts', 'list');
    expect(out).toMatch(/^acc_…[0-9a-z]{6} {2}Acme Corporation Internation… {2}subscription_27 {2}active/m);
    expect(out).toMatch(/^acc_…[0-9a-z]{6} {2}Globex {2}/m);
    expect(out).not.toMatch(ID);
    expect(out).toContain('Not shown in 80 columns: created, keys, users (--json has them).');
    const json = await t.json<Array<{ id: string }>>('accounts', 'list');
    expect(json[0]!.id).toBe(acme);
    const paged = await fits('accounts', 'list', '--limit', '1');
    // The next page's command stays whole, to paste.
    expect(paged).toContain(`toolgate accounts list --limit 1 --after ${acme}`);
  });

  it('refuses a shortened id pasted back, saying where the whole one is (exit 2)', async () => {
    const short = /^acc_…\w{6}/m.exec(await fits('accounts', 'list'))![0];
    for (const args of [
      ['accounts', 'show', short],
      ['audit', 'list', `--account=${short}`],
    ]) {
      const r = await t.run(...args);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `toolgate: "${short}" is an id shortened to fit a table: give it whole. The same command with --json prints every id whole, as does a wider terminal (COLUMNS=200).\n`,
      );
    }
    const typed = await t.run('keys', 'revoke', 'key_...1nagjc', '--json');
    expect(typed.code).toBe(2);
    expect(JSON.parse(typed.stdout)).toMatchObject({ code: 'invalid_arguments' });
  });

  it('keys, users, webhooks: shortened ids, names and emails readable', async () => {
    const keys = await fits('keys', 'list', acme);
    // The times to the day before the name gives way.
    expect(keys).toMatch(
      /^key_…[0-9a-z]{6} {2}production server eu-west… {2}tg_….{4} {2}active {2}\d{4}-\d\d-\d\d {2}-$/m,
    );
    const users = await fits('users', 'list', acme);
    expect(users).toMatch(
      /^usr_…[0-9a-z]{6} {2}alexandra\.konstantinopoulou@engineering\.acme-\w*… {2}owner {3}\d{4}-\d\d-\d\d$/m,
    );
    const hooks = await fits('webhooks', 'list');
    expect(hooks).toMatch(
      /^whe_…[0-9a-z]{6} {2}http:\/\/127\.0\.0\.1:9\/toolgate\/event… {2}acc_…\w{6} {2}all {5}80,100$/m,
    );
    const deliveries = await fits('webhooks', 'deliveries', endpoint);
    // Retried: when, to the minute.
    expect(deliveries).toMatch(
      /^whd_…[0-9a-z]{6} {2}webhook\.test {2}pending {2}1 {9}\d{4}-\d\d-\d\d \d\d:\d\dZ {2}ECONNREFUSED/m,
    );
    expect(deliveries).toMatch(/ECONNREFUSED/);
  });

  it('plans list: the plans, then their limits side by side', async () => {
    const out = await fits('plans', 'list');
    expect(out).toMatch(/^PLAN\s+UNLIMITED\s+SUBSCRIPTION\s+STRIPE PRICE\s+PERIOD TOKENS$/m);
    // Plans side by side as many as fit; the next ones in a limits table of their own under it.
    expect(out).toMatch(/^LIMIT {15}enterprise_unlimited_2026 {2}free {2}subscription_27$/m);
    expect(out).toMatch(/^enrich records 5h\s+-\s+100\s+1000$/m);
    expect(out).toMatch(/^scrape pages 1d\s+50000\s+-\s+-$/m);
    expect(out).toMatch(/\n\nLIMIT {15}subscription_97 {2}team\n/);
    expect(out).toMatch(/^enrich records 5h {3}15000 {12}-$/m);
    expect(out).toMatch(/^scrape pages 1d\s+-\s+2000$/m);
  });

  it('tokens ledger, audit list, topups, billing show and unmatched', async () => {
    const ledger = await fits('tokens', 'ledger', acme);
    expect(ledger).toMatch(/^\S+Z {2}grant {2}\+100 {4}5100 {5}welcome bonus for the enterprise …$/m);
    expect(ledger).toContain('Not shown in 80 columns: idempotency key, id (--json has them).');
    const audit = await fits('audit', 'list');
    expect(audit).toMatch(/^AT\s+ACTOR\s+ACTION\s+ACCOUNT\s+TARGET/m);
    expect(audit).toMatch(/account\.create {2}acc_…[0-9a-z]{6}/);
    const paged = await fits('audit', 'list', '--account', acme, '--limit', '2');
    // The next page's command on lines of its own, continued as a shell reads them.
    expect(paged).toMatch(
      new RegExp(
        `\nMore may follow:\n  toolgate audit list --account ${acme} --limit 2 \\\\\n    --after aud_\\w{26}\n$`,
      ),
    );
    const topups = await fits('topups', 'list');
    expect(topups).toMatch(/^pack_10000_tokens {2}10000 {3}price_1MoBy5LkdIwHu7ixZhnattbh/m);
    const billing = await fits('billing', 'show', acme);
    expect(billing).toMatch(/^\S+Z {2}customer\.subscripti… {2}unknown_price {2}price_1MoBy5LkdIwHu7…$/m);
    expect(billing).toContain('Not shown in 80 columns: event (--json has it).');
    await fits('billing', 'unmatched');
  });

  it('usage report by day, key and tool; by key names the keys', async () => {
    await fits('usage', 'report', acme, ...RANGE);
    const byKey = await fits('usage', 'report', acme, ...RANGE, '--by', 'key');
    expect(byKey).toMatch(/^KEY\s+NAME\s+CALLS\s+TOKENS\s+RECORDS/m);
    expect(byKey).toMatch(new RegExp(`^key_…[0-9a-z]{6}  ${KEY_NAME}  123 `, 'm'));
    const csv = await t.run('usage', 'report', acme, ...RANGE, '--by', 'key', '--csv');
    expect(csv.stdout).toContain(`${key},123,`);
    const byTool = await fits('usage', 'report', acme, ...RANGE, '--by', 'tool');
    expect(byTool).toMatch(new RegExp(`^${TOOL}  120 `, 'm'));
  });

  it('tools list', async () => {
    const out = await fits('tools', 'list');
    expect(out).toMatch(new RegExp(`^${TOOL}  search {4}2/call \\+ 1/record  https://companies…$`, 'm'));
  });
});
