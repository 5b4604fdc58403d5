import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/service/views.js';
import { type Scratch, scratch } from './run-cli.js';

const ACTOR = `cli:${userInfo().username}`;

let t: Scratch;
let accountId: string;
let keyId: string;
let key: string;
beforeAll(async () => {
  // Wide enough for every cell whole: fitting the terminal is table.test.ts's.
  t = scratch({ COLUMNS: '1000' });
  accountId = (await t.json('accounts', 'create', '--name', 'Audit Co', '--tokens', '10')).id;
  ({ id: keyId, key } = await t.json('keys', 'create', accountId, '--name', 'ci'));
});
afterAll(() => t.cleanup());

describe('toolgate audit list', () => {
  it('lists what was done through the CLI, as cli:<OS user>, oldest first; refusals and no-ops are not there', async () => {
    const user = await t.json('users', 'add', accountId, '--email', 'ann@example.com');
    const grant = await t.json('tokens', 'grant', accountId, '5', '--reason', 'top-up');
    expect((await t.run('tokens', 'charge', accountId, '999')).code).toBe(1);
    expect((await t.run('users', 'add', accountId, '--email', 'ann@example.com')).code).toBe(1);
    await t.json('usage', 'record', accountId, '--category', 'enrich', '--records', '2');
    await t.json('keys', 'revoke', keyId);
    await t.json('keys', 'revoke', keyId); // already revoked: nothing happens, nothing audited

    const entries = await t.json<AuditRecord[]>('audit', 'list', '--account', accountId);
    expect(entries.map((e) => [e.actor, e.action, e.account_id, e.target_id])).toEqual([
      [ACTOR, 'account.create', accountId, null],
      [ACTOR, 'key.create', accountId, keyId],
      [ACTOR, 'user.add', accountId, user.id],
      [ACTOR, 'tokens.grant', accountId, grant.entry.id],
      [ACTOR, 'usage.record', accountId, null],
      [ACTOR, 'key.revoke', accountId, keyId],
    ]);
    expect(entries[0]?.details).toEqual({ name: 'Audit Co', plan: 'free', unlimited: null, tokens: 10 });
    expect(entries[3]?.details).toEqual({ amount: 5, reason: 'top-up', idempotency_key: null });
    expect(entries[4]?.details).toEqual({
      category: 'enrich',
      records: 2,
      requests: 1,
      idempotency_key: null,
    });
    expect(entries[0]?.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('never shows the API key, in JSON or in the table', async () => {
    const json = await t.run('audit', 'list', '--json');
    const human = await t.run('audit', 'list');
    expect(json.code).toBe(0);
    expect(human.code).toBe(0);
    for (const out of [json.stdout, human.stdout]) {
      expect(out).toContain(keyId);
      expect(out).not.toContain(key);
      expect(out).not.toContain(key.slice(3));
    }
  });

  it('prints a table, a page at a time, and says how to get the next page', async () => {
    await t.json(
      'plans',
      'set',
      'audit_plan',
      'enrich.records.5h=1',
      'enrich.records.1w=2',
      'enrich.requests.5h=3',
      'search.records.5h=4',
      'search.records.1w=5',
      'search.requests.5h=6',
    );
    const all = await t.json<AuditRecord[]>('audit', 'list');
    const plan = all.at(-1);
    expect(plan).toMatchObject({
      actor: ACTOR,
      action: 'plan.put',
      account_id: null,
      target_id: 'audit_plan',
    });

    const page = await t.run('audit', 'list', '--limit', '2');
    expect(page.code).toBe(0);
    expect(page.stdout).toMatch(/^AT\s+ACTOR\s+ACTION\s+ACCOUNT\s+TARGET\s+DETAILS\s+ID$/m);
    expect(page.stdout).toContain(`${ACTOR}  account.create`);
    expect(page.stdout).toContain(`More may follow: toolgate audit list --limit 2 --after ${all[1]!.id}`);
    const next = await t.json<AuditRecord[]>('audit', 'list', '--limit', '2', '--after', all[1]!.id);
    expect(next).toEqual(all.slice(2, 4));

    const planRow = (await t.run('audit', 'list', '--after', all.at(-2)!.id)).stdout;
    expect(planRow).toMatch(/plan\.put\s+-\s+audit_plan\s+\{"unlimited":false,"limits":/);
  });

  it('refuses an unknown account with exit 1 and a bad limit with exit 2', async () => {
    const unknown = await t.run('audit', 'list', '--account', 'acc_nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('toolgate: No account "acc_nope".\n');
    expect((await t.run('audit', 'list', '--limit', '0')).code).toBe(2);
  });
});
