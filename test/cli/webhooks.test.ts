/**
 * `toolgate webhooks` and `accounts update --low-balance` on a real database through the built
 * CLI: the secret printed once and never again (not in list, not in the audit trail), deliveries
 * listed and replayed, every bad value refused with its reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { type Scratch, scratch } from './run-cli.js';

let t: Scratch;
let strict: Scratch;
beforeAll(() => {
  // The receivers of these tests would be on loopback: allowed here, as the server's tests allow it.
  // COLUMNS: wide enough for every cell whole (fitting the terminal is table.test.ts's).
  t = scratch({ TOOLGATE_WEBHOOK_ALLOW_PRIVATE: 'true', COLUMNS: '1000' });
  strict = scratch();
});
afterAll(() => {
  t.cleanup();
  strict.cleanup();
});

describe('toolgate webhooks', () => {
  let endpointId: string;
  let secret: string;
  let accountId: string;

  it('adds an endpoint and prints its secret once', async () => {
    accountId = (await t.json('accounts', 'create', '--name', 'Acme')).id;
    const human = await t.run(
      'webhooks',
      'add',
      '--url',
      'http://127.0.0.1:9/hooks',
      '--thresholds',
      '50,90',
    );
    expect(human.code).toBe(0);
    const m = /^ {2}(whsec_[A-Za-z0-9+/=]+)$/m.exec(human.stdout);
    expect(m).not.toBeNull();
    secret = m![1]!;
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(24);
    expect(human.stdout).toMatch(/shown only now/);
    const added = await t.json(
      'webhooks',
      'add',
      '--url',
      'http://127.0.0.1:9/acme',
      '--account',
      accountId,
      '--events',
      'key.created,key.revoked',
    );
    expect(added).toMatchObject({
      account_id: accountId,
      events: ['key.created', 'key.revoked'],
      thresholds: [80, 100],
    });
    endpointId = added.id;
    const list = await t.json<Record<string, unknown>[]>('webhooks', 'list');
    expect(list).toHaveLength(2);
    expect(JSON.stringify(list)).not.toMatch(/whsec_/);
    expect(await t.json('webhooks', 'list', '--account', accountId)).toHaveLength(1);
    const audit = await t.run('audit', 'list', '--json');
    expect(audit.stdout).toMatch(/webhook\.add/);
    expect(audit.stdout).not.toMatch(/whsec_/);
  });

  it("lists an endpoint's deliveries and replays one", async () => {
    await t.json('keys', 'create', accountId); // key.created: wanted by the account's endpoint
    const store = new SqliteStore({ path: t.env.TOOLGATE_DATABASE_URL!.slice('sqlite:'.length) });
    try {
      await store.webhooks.fanOut(Math.floor(Date.now() / 1000), () => newId('whd'), 100);
    } finally {
      await store.close();
    }
    const deliveries = await t.json<{ id: string; type: string; status: string }[]>(
      'webhooks',
      'deliveries',
      endpointId,
    );
    expect(deliveries.map((d) => [d.type, d.status])).toEqual([['key.created', 'pending']]);
    const table = await t.run('webhooks', 'deliveries', endpointId);
    expect(table.stdout).toMatch(/key\.created\s+pending\s+0/);
    expect(await t.json('webhooks', 'replay', deliveries[0]!.id)).toMatchObject({
      status: 'pending',
      attempts: 0,
    });
    expect((await t.run('webhooks', 'replay', 'whd_nope')).stderr).toMatch(/No webhook delivery "whd_nope"/);
    expect((await t.run('webhooks', 'deliveries', 'whe_nope')).stderr).toMatch(
      /No webhook endpoint "whe_nope"/,
    );
  });

  it.each([
    [['--url', 'ftp://example.com/x'], /http:\/\/ or https:\/\//],
    [['--url', 'http://127.0.0.1:9/x', '--events', 'fair_use.treshold'], /unknown event "fair_use.treshold"/],
    [['--url', 'http://127.0.0.1:9/x', '--thresholds', '0,80'], /from 1 to 100, not 0/],
    [['--url', 'http://127.0.0.1:9/x', '--thresholds', 'eighty'], /not "eighty"/],
    [['--url', 'http://127.0.0.1:9/x', '--account', 'acc_nope'], /No account "acc_nope"/],
  ])('refuses webhooks add %j', async (args, message) => {
    const r = await t.run('webhooks', 'add', ...args);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });

  it("refuses loopback endpoints unless TOOLGATE_WEBHOOK_ALLOW_PRIVATE=true, saying it is the servers' setting", async () => {
    const r = await strict.run('webhooks', 'add', '--url', 'http://127.0.0.1:9/hooks');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/127\.0\.0\.1.*TOOLGATE_WEBHOOK_ALLOW_PRIVATE/);
    // Set only where the CLI runs, it would let in an endpoint no server delivers to.
    expect(r.stderr).toContain(
      "That is the server's setting: set it in the environment of every server (each checks the address again before every delivery); the CLI's shell alone is not enough.",
    );
  });

  it('removes an endpoint', async () => {
    expect(await t.json('webhooks', 'remove', endpointId)).toMatchObject({ id: endpointId });
    expect((await t.run('webhooks', 'remove', endpointId)).stderr).toMatch(/No webhook endpoint/);
  });

  it("sets and clears an account's low balance", async () => {
    expect(await t.json('accounts', 'update', accountId, '--low-balance', '100')).toMatchObject({
      low_balance: 100,
    });
    expect(await t.json('accounts', 'update', accountId, '--low-balance', 'none')).toMatchObject({
      low_balance: null,
    });
    const bad = await t.run('accounts', 'update', accountId, '--low-balance', '0');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--low-balance must be a whole number from 1/);
  });
});
