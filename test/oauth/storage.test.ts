/**
 * What the OAuth server keeps, read straight from the database on both backends: no token, code or
 * session id in a row (only their SHA-256), the grant's key row beside the API keys, and pruning of
 * registrations no grant uses.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashId } from '../../src/oauth/adapter.js';
import { accountWithKey } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable } from '../postgres.js';
import { authorize, exchange, register, token } from './flow.js';
import { type Backend, type Live, liveServer, person } from './harness.js';

const backends: Backend[] = ['sqlite', 'postgres'];

async function rows(live: Live, backend: Backend): Promise<{ model: string; id: string; payload: string }[]> {
  const sql = 'SELECT model, id, payload FROM oauth_models';
  if (backend === 'sqlite') {
    const db = new Database(live.where, { readonly: true });
    try {
      return db.prepare(sql).all() as never;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`SET search_path TO "${live.where}"`);
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describe.each(backends)('OAuth storage on %s', (backend) => {
  let live: Live;
  let skip = false;
  let accountId: string;
  let cookie: string;

  beforeAll(async () => {
    if (backend === 'postgres' && !(await postgresAvailable())) {
      skip = true;
      return;
    }
    live = await liveServer(backend);
    accountId = (await accountWithKey(live.services)).accountId;
    cookie = live.identity.signIn(await person(live, 'kim@example.com', [accountId]));
  });
  afterAll(async () => live?.close());

  it('keeps tokens, codes and session ids only as hashes', async ({ skip: s }) => {
    if (skip) return s();
    const clientId = String((await register(live)).body.client_id);
    const code = await authorize(live, clientId, cookie, accountId);
    const t = await exchange(live, code);
    const r = await token(live, {
      grant_type: 'refresh_token',
      refresh_token: t.body.refresh_token!,
      client_id: clientId,
    });
    expect(r.status).toBe(200);
    const secrets = [
      code.code,
      t.body.access_token!,
      t.body.refresh_token!,
      r.body.access_token!,
      r.body.refresh_token!,
      ...code.jar
        .header()
        .split('; ')
        .filter((c) => c.startsWith('_session') || c.startsWith('_interaction'))
        .map((c) => c.slice(c.indexOf('=') + 1))
        .filter((v) => v.length >= 20),
    ];
    expect(secrets.length).toBeGreaterThan(5);
    const stored = await rows(live, backend);
    const text = JSON.stringify(stored);
    for (const secret of secrets) expect(text).not.toContain(secret);
    const ids = new Set(stored.map((row) => `${row.model}:${row.id}`));
    expect(ids.has(`AccessToken:${hashId(r.body.access_token!)}`)).toBe(true);
    expect(ids.has(`RefreshToken:${hashId(r.body.refresh_token!)}`)).toBe(true);
  });

  it('prunes registrations that no grant uses, and keeps those a grant uses', async ({ skip: s }) => {
    if (skip) return s();
    const unused = String((await register(live)).body.client_id);
    const used = String((await register(live)).body.client_id);
    await exchange(live, await authorize(live, used, cookie, accountId));
    const now = Math.floor(Date.now() / 1000);
    expect(await live.store.oauth.prune(now, now + 10)).toBeGreaterThan(0);
    expect(await live.store.oauth.find('Client', unused, now)).toBeUndefined();
    expect(await live.store.oauth.find('Client', used, now)).toBeDefined();
  });
});
