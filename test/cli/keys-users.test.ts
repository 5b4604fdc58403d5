import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Scratch, scratch } from './run-cli.js';

let t: Scratch;
let accountId: string;
beforeAll(async () => {
  t = scratch();
  accountId = (await t.json('accounts', 'create', '--name', 'Keys Inc')).id;
});
afterAll(() => t.cleanup());

const DIGEST = /[0-9a-f]{64}/;

describe('toolgate keys', () => {
  it('prints a new key once, and never again in lists or account views', async () => {
    const r = await t.run('keys', 'create', accountId, '--name', 'ci');
    expect(r.code).toBe(0);
    const keys = r.stdout.match(/\btg_[0-9A-Za-z]{11}\b/g) ?? [];
    expect(keys).toHaveLength(1);
    const key = keys[0]!;
    expect(r.stdout).toContain('only time the key is shown');

    for (const args of [
      ['keys', 'list', accountId],
      ['keys', 'list', accountId, '--json'],
      ['accounts', 'show', accountId],
      ['accounts', 'show', accountId, '--json'],
    ]) {
      const out = await t.run(...args);
      expect(out.code).toBe(0);
      expect(out.stdout, args.join(' ')).not.toContain(key);
      expect(out.stdout, args.join(' ')).not.toMatch(DIGEST);
    }
    const list = await t.run('keys', 'list', accountId);
    expect(list.stdout).toContain(`tg_…${key.slice(-4)}`);
  });

  it('prints {"id","key",...} with --json, id and key first', async () => {
    const created = await t.json('keys', 'create', accountId);
    expect(Object.keys(created).slice(0, 2)).toEqual(['id', 'key']);
    expect(created).toMatchObject({ account_id: accountId, status: 'active', name: null, revoked_at: null });
    expect(created.id).toMatch(/^key_/);
    expect(created.key).toMatch(/^tg_[0-9A-Za-z]{11}$/);
    expect(created.hint).toBe(`tg_…${created.key.slice(-4)}`);
  });

  it('revokes a key: it shows as revoked and no longer counts', async () => {
    const created = await t.json('keys', 'create', accountId, '--name', 'temp');
    const before = (await t.json('accounts', 'show', accountId)).api_key_count;
    const r = await t.run('keys', 'revoke', created.id);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Revoked key ${created.id}`);
    const list = await t.json<Array<{ id: string; status: string }>>('keys', 'list', accountId);
    expect(list.find((k) => k.id === created.id)?.status).toBe('revoked');
    expect((await t.json('accounts', 'show', accountId)).api_key_count).toBe(before - 1);
  });

  it('refuses unknown ids with exit 1', async () => {
    const revoke = await t.run('keys', 'revoke', 'key_nope');
    expect(revoke.code).toBe(1);
    expect(revoke.stderr).toBe('toolgate: No key "key_nope".\n');
    const create = await t.run('keys', 'create', 'acc_nope', '--json');
    expect(create.code).toBe(1);
    expect(JSON.parse(create.stdout)).toMatchObject({ code: 'not_found', message: 'No account "acc_nope".' });
  });
});

describe('toolgate users', () => {
  it('adds, lists and removes users', async () => {
    const owner = await t.json('users', 'add', accountId, '--email', 'Owner@Example.com', '--role', 'owner');
    expect(owner).toMatchObject({ account_id: accountId, email: 'owner@example.com', role: 'owner' });
    const member = await t.json('users', 'add', accountId, '--email', 'member@example.com');
    expect(member.role).toBe('member');

    const list = await t.run('users', 'list', accountId);
    expect(list.stdout).toMatch(/^ID\s+EMAIL\s+ROLE\s+CREATED$/m);
    expect(list.stdout).toContain('owner@example.com');
    expect(list.stdout).toContain('member@example.com');
    expect((await t.json('accounts', 'show', accountId)).user_count).toBe(2);

    const removed = await t.run('users', 'remove', member.id);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`Removed user ${member.id} member@example.com`);
    const after = await t.json<Array<{ id: string }>>('users', 'list', accountId);
    expect(after.map((u) => u.id)).toEqual([owner.id]);
  });

  it('refuses a duplicate email with exit 1 (conflict)', async () => {
    await t.json('users', 'add', accountId, '--email', 'dup@example.com');
    const r = await t.run('users', 'add', accountId, '--email', 'DUP@example.com');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('toolgate: The account already has a user dup@example.com.\n');
    const j = await t.run('users', 'add', accountId, '--email', 'dup@example.com', '--json');
    expect(JSON.parse(j.stdout)).toMatchObject({ status: 'error', error: 'Conflict', code: 'conflict' });
  });

  it("changes a user's role; the account keeps an owner, and a refusal changes nothing", async () => {
    const roles = await t.json('accounts', 'create', '--name', 'Roles Inc');
    const ann = await t.json('users', 'add', roles.id, '--email', 'ann@example.com', '--role', 'owner');
    const bob = await t.json('users', 'add', roles.id, '--email', 'bob@example.com');
    const promoted = await t.run('users', 'role', bob.id, 'owner');
    expect(promoted.code).toBe(0);
    // One sentence, wrapped to the width (100 here).
    expect(promoted.stdout.replace(/\s+/g, ' ')).toBe(
      `User ${bob.id} bob@example.com is an owner of account ${roles.id}. `,
    );
    expect(await t.json('users', 'role', ann.id, 'member')).toMatchObject({ id: ann.id, role: 'member' });

    const last = await t.run('users', 'role', bob.id, 'member');
    expect(last.code).toBe(1);
    expect(last.stderr).toBe('toolgate: An account keeps at least one owner.\n');
    const bad = await t.run('users', 'role', ann.id, 'admin', '--json');
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({
      code: 'invalid_arguments',
      message: 'role must be one of owner, member.',
    });
    const unknown = await t.run('users', 'role', 'usr_nope', 'owner');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('toolgate: No user "usr_nope".\n');
    const after = await t.json<Array<{ email: string; role: string }>>('users', 'list', roles.id);
    expect(after.map((u) => [u.email, u.role])).toEqual([
      ['ann@example.com', 'member'],
      ['bob@example.com', 'owner'],
    ]);
    const audit = await t.json<Array<{ action: string; target_id: string }>>(
      'audit',
      'list',
      '--account',
      roles.id,
    );
    expect(audit.filter((e) => e.action === 'user.role').map((e) => e.target_id)).toEqual([bob.id, ann.id]);
  });

  it('rejects a bad email or role with exit 2, and an unknown user with exit 1', async () => {
    expect((await t.run('users', 'add', accountId, '--email', 'not-an-email')).code).toBe(2);
    expect((await t.run('users', 'add', accountId, '--email', 'a@b.io', '--role', 'admin')).code).toBe(2);
    const r = await t.run('users', 'remove', 'usr_nope');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('toolgate: No user "usr_nope".\n');
  });
});
