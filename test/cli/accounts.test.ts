import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS, migrationLabel } from '../../src/store/migrations/index.js';
import { type Scratch, scratch } from './run-cli.js';

let t: Scratch;
beforeAll(() => {
  t = scratch();
});
afterAll(() => t.cleanup());

describe('toolgate accounts', () => {
  it('creates an account on a fresh database and prints the record with --json', async () => {
    const created = await t.json('accounts', 'create', '--name', 'Acme', '--tokens', '250');
    expect(created).toMatchObject({
      name: 'Acme',
      status: 'active',
      plan: 'free',
      token_balance: 250,
      unlimited: false,
      api_key_count: 0,
      user_count: 0,
    });
    expect(created.id).toMatch(/^acc_[0-9a-z]{26}$/);
    expect(created.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(created.fair_use.enrich.records['5h']).toEqual({
      limit: 100,
      used: 0,
      remaining: 100,
      resets_at: null,
    });

    const shown = await t.json('accounts', 'show', created.id);
    expect(shown).toEqual(created);
  });

  it('shows an account to a person with its balance and fair-use bars', async () => {
    const a = await t.json('accounts', 'create', '--name', 'Bars Ltd', '--plan', 'subscription_27');
    const r = await t.run('accounts', 'show', a.id);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^name\s+Bars Ltd$/m);
    expect(r.stdout).toMatch(/^plan\s+subscription_27$/m);
    expect(r.stdout).toMatch(/^balance\s+0 tokens$/m);
    expect(r.stdout).toMatch(/enrich records 5h\s+\[-{10}\]\s+0\/1000 used, 1000 left, not running/);
  });

  it('says "unlimited" for the balance of an unlimited account', async () => {
    const a = await t.json('accounts', 'create', '--name', 'Big', '--unlimited');
    expect(a).toMatchObject({ unlimited: true, token_balance: -1 });
    const r = await t.run('accounts', 'show', a.id);
    expect(r.stdout).toMatch(/^balance\s+unlimited$/m);
  });

  it('updates name, plan, status and the unlimited override', async () => {
    const a = await t.json('accounts', 'create', '--name', 'Old name');
    const updated = await t.json(
      'accounts',
      'update',
      a.id,
      '--name',
      'New name',
      '--plan',
      'subscription_97',
      '--status',
      'suspended',
    );
    expect(updated).toMatchObject({
      name: 'New name',
      plan: 'subscription_97',
      status: 'suspended',
      unlimited: true,
      token_balance: -1,
    });
    const limited = await t.json('accounts', 'update', a.id, '--unlimited', 'false');
    expect(limited).toMatchObject({ unlimited: false, unlimited_override: false, token_balance: 0 });
    const following = await t.json('accounts', 'update', a.id, '--unlimited', 'plan');
    expect(following).toMatchObject({ unlimited: true, unlimited_override: null });
  });

  it('lists accounts a page at a time with --limit and --after', async () => {
    const all = await t.json<Array<{ id: string }>>('accounts', 'list');
    expect(all.length).toBeGreaterThanOrEqual(4);
    const first = await t.json<Array<{ id: string }>>('accounts', 'list', '--limit', '2');
    expect(first.map((a) => a.id)).toEqual(all.slice(0, 2).map((a) => a.id));
    const next = await t.json<Array<{ id: string }>>(
      'accounts',
      'list',
      '--limit',
      '2',
      '--after',
      first[1]!.id,
    );
    expect(next.map((a) => a.id)).toEqual(all.slice(2, 4).map((a) => a.id));

    const human = await t.run('accounts', 'list', '--limit', '2');
    expect(human.stdout).toMatch(/^ID\s+NAME\s+PLAN\s+STATUS\s+BALANCE/m);
    expect(human.stdout).toContain(`--after ${first[1]!.id}`);
  });

  it('refuses an unknown account id with exit 1 and a clear message', async () => {
    const r = await t.run('accounts', 'show', 'acc_doesnotexist');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('toolgate: No account "acc_doesnotexist".\n');
    expect(r.stdout).toBe('');

    const j = await t.run('accounts', 'update', 'acc_doesnotexist', '--name', 'x', '--json');
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toEqual({
      status: 'error',
      error: 'Not Found',
      code: 'not_found',
      message: 'No account "acc_doesnotexist".',
    });
  });

  it('refuses to reopen a closed account with exit 1', async () => {
    const a = await t.json('accounts', 'create', '--name', 'Closing');
    await t.json('accounts', 'update', a.id, '--status', 'closed');
    const r = await t.run('accounts', 'update', a.id, '--status', 'active');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('cannot be reopened');
  });
});

describe('toolgate usage errors', () => {
  it('rejects a number that is not one with exit 2, naming the option', async () => {
    const r = await t.run('accounts', 'create', '--name', 'X', '--tokens', 'abc');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^toolgate: .*--tokens must be a whole number from 0 to/);
    const bads = ['-1', '1.5', '1e3', ''];
    const results = await Promise.all(
      bads.map((bad) => t.run('accounts', 'create', '--name', 'X', '--tokens', bad)),
    );
    results.forEach((again, i) => {
      expect(again.code, `--tokens ${JSON.stringify(bads[i])}`).toBe(2);
    });
  });

  it('prints usage errors as a JSON error body in --json mode', async () => {
    const r = await t.run('accounts', 'list', '--limit', '0', '--json');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'error',
      code: 'invalid_arguments',
      message: expect.stringContaining('--limit must be a whole number from 1 to 500'),
    });
  });

  it('exits 2 for a missing required option, an unknown command or option, and a bad choice', async () => {
    const cases = [
      ['accounts', 'create'],
      ['acounts', 'list'],
      ['accounts', 'list', '--bogus'],
      ['accounts', 'update', 'acc_x', '--status', 'sleeping'],
      ['accounts', 'update', 'acc_x', '--unlimited', 'maybe'],
      ['accounts', 'update', 'acc_x'],
      ['serve', '--port', '70000'],
    ];
    const results = await Promise.all(cases.map((args) => t.run(...args)));
    results.forEach((r, i) => {
      expect(r.code, cases[i]!.join(' ')).toBe(2);
      expect(r.stderr, cases[i]!.join(' ')).toMatch(/^toolgate: \S/);
    });
  });

  it('exits 2 when the service finds the arguments invalid (unknown plan)', async () => {
    const r = await t.run('accounts', 'create', '--name', 'X', '--plan', 'gold', '--json');
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({
      code: 'invalid_arguments',
      message: 'Unknown plan "gold".',
    });
  });

  it('exits 2 with the configuration problem when TOOLGATE_DATABASE_URL is invalid', async () => {
    const { runCli } = await import('./run-cli.js');
    const r = await runCli({ ...t.env, TOOLGATE_DATABASE_URL: 'mysql://nope' }, ['accounts', 'list']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('TOOLGATE_DATABASE_URL must be sqlite:<path>');
  });

  it('prints help and exits 0 for --help', async () => {
    const r = await t.run('accounts', 'create', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--name <name>');
    expect(r.stdout).toContain('--json');
  });
});

describe('toolgate migrate', () => {
  it('migrates a fresh database once, then reports it up to date', async () => {
    const fresh = scratch();
    try {
      expect(await fresh.json('migrate')).toEqual({
        applied: MIGRATIONS.map(migrationLabel),
      });
      expect(await fresh.json('migrate')).toEqual({ applied: [] });
      const r = await fresh.run('migrate');
      expect(r.stdout).toBe('The database is up to date.\n');
    } finally {
      fresh.cleanup();
    }
  });
});
