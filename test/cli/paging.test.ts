/**
 * `--limit` and `--after` on the lists the admin API answers whole (keys, users, webhook endpoints,
 * tools): the page rule itself, and the built CLI on a real database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageOf } from '../../src/cli/paging.js';
import { type Scratch, scratch } from './run-cli.js';

const byId = (x: { id: string }) => x.id;
const items = ['a1', 'a2', 'a3', 'a5'].map((id) => ({ id }));

describe('pageOf', () => {
  it('takes the first page, then the items after the cursor', () => {
    expect(pageOf(items, byId, { limit: 2 }).map(byId)).toEqual(['a1', 'a2']);
    expect(pageOf(items, byId, { limit: 2, after: 'a2' }).map(byId)).toEqual(['a3', 'a5']);
    expect(pageOf(items, byId, { after: 'a5' })).toEqual([]);
  });

  it('starts after where a cursor no longer listed would sort', () => {
    expect(pageOf(items, byId, { after: 'a4' }).map(byId)).toEqual(['a5']);
  });
});

let t: Scratch;
let account: string;
let keys: string[];
beforeAll(async () => {
  t = scratch({ COLUMNS: '1000' });
  account = (await t.json('accounts', 'create', '--name', 'Paged')).id;
  keys = [];
  for (const name of ['one', 'two', 'three'])
    keys.push((await t.json('keys', 'create', account, '--name', name)).id);
});
afterAll(() => t.cleanup());

describe('toolgate keys list --limit --after', () => {
  it('prints a page and the command for the next one', async () => {
    const r = await t.run('keys', 'list', account, '--limit', '2');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(keys[0]!);
    expect(r.stdout).toContain(keys[1]!);
    expect(r.stdout).not.toContain(keys[2]!);
    expect(r.stdout).toMatch(
      new RegExp(`More may follow: toolgate keys list ${account} --limit 2 --after ${keys[1]}\\n$`),
    );
    const next = await t.json<{ id: string }[]>('keys', 'list', account, '--limit', '2', '--after', keys[1]!);
    expect(next.map(byId)).toEqual([keys[2]]);
  });

  it('says so when nothing follows, and refuses a bad limit (exit 2)', async () => {
    const none = await t.run('keys', 'list', account, '--after', keys[2]!);
    expect(none.stdout).toBe(`Account ${account} has no keys after ${keys[2]}.\n`);
    const bad = await t.run('keys', 'list', account, '--limit', '0');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--limit must be a whole number from 1 to 500/);
  });

  it('pages users, webhook endpoints and tools the same way', async () => {
    expect(await t.json('users', 'list', account, '--limit', '1')).toEqual([]);
    expect(await t.json('webhooks', 'list', '--limit', '1')).toEqual([]);
    expect(await t.json('tools', 'list', '--limit', '1', '--after', 'zzz')).toEqual([]);
  });
});
