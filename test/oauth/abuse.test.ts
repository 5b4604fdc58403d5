/**
 * The OAuth doors under abuse and faults, on both backends: registration bounded (per address, in
 * size, in how long and how many unused clients are kept), the token endpoint answering a store
 * fault 503 `temporarily_unavailable` without spending the refresh token, and the details clients
 * judge (the 401's challenge, client authentication, the token answer's scope, the ID token's sub).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/domain/clock.js';
import { StoreUnavailableError } from '../../src/domain/errors.js';
import { OAuthServer } from '../../src/oauth/server.js';
import { accountWithKey, KEY_SECRET } from '../helpers.js';
import { postgresAvailable } from '../postgres.js';
import { authorize, callTool, exchange, REDIRECT, register, token } from './flow.js';
import { type Backend, type Live, liveServer, person } from './harness.js';

const backends: Backend[] = ['sqlite', 'postgres'];
const now = () => Math.floor(Date.now() / 1000);
const idTokenClaims = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

describe.each(backends)('OAuth under abuse and faults on %s', (backend) => {
  let live: Live;
  let skip = false;
  let account: string;
  let cookie: string;

  beforeAll(async () => {
    if (backend === 'postgres' && !(await postgresAvailable())) {
      skip = true;
      return;
    }
    live = await liveServer(backend);
    account = (await accountWithKey(live.services, { name: 'Abused' })).accountId;
    cookie = live.identity.signIn(await person(live, 'Eve.Person@example.com', [account]));
  });
  afterAll(async () => live?.close());

  it('refuses what a client may not store: a long name, too many or too long redirect URIs, 8 KB of metadata', async ({
    skip: s,
  }) => {
    if (skip) return s();
    const refused = [
      { client_name: 'n'.repeat(101) },
      { 'client_name#fr': 'n'.repeat(101) },
      { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example.com/cb/${i}`) },
      { redirect_uris: [`https://app.example.com/${'p'.repeat(2000)}`] },
      { client_uri: `https://app.example.com/${'a'.repeat(8200)}` },
    ];
    for (const metadata of refused) {
      const r = await register(live, metadata);
      expect(r.status, JSON.stringify(metadata).slice(0, 60)).toBe(400);
      expect(r.body.error).toBe('invalid_client_metadata');
    }
    const fits = await register(live, {
      client_name: 'n'.repeat(100),
      redirect_uris: Array.from({ length: 10 }, (_, i) => `https://app.example.com/cb/${i}`),
    });
    expect(fits.status).toBe(201);
    expect(fits.body.client_name).toBe('n'.repeat(100));
  });

  it('registers public clients only: metadata says none, a client asking for a secret gets none', async ({
    skip: s,
  }) => {
    if (skip) return s();
    const as = (await (await fetch(`${live.url}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(as.token_endpoint_auth_methods_supported).toEqual(['none']);
    for (const method of ['client_secret_basic', 'client_secret_post']) {
      const r = await register(live, { token_endpoint_auth_method: method });
      expect(r.status).toBe(201);
      expect(r.body.token_endpoint_auth_method).toBe('none');
      expect(r.body.client_secret).toBeUndefined();
    }
  });

  it('prunes a registration no grant uses within the hour, and keeps one with a grant', async ({
    skip: s,
  }) => {
    if (skip) return s();
    const unused = String((await register(live)).body.client_id);
    const used = String((await register(live)).body.client_id);
    expect((await exchange(live, await authorize(live, used, cookie, account))).status).toBe(200);
    // The server's prune, as it runs every 10 minutes, an hour later (its defaults).
    const later = new OAuthServer({
      store: live.store,
      reads: live.oauth.opts.reads,
      secret: KEY_SECRET,
      publicUrl: () => live.url,
      clock: new FixedClock(Date.now() + 50 * 60_000 + 1000),
    });
    await later.prune();
    expect(await live.store.oauth.find('Client', unused, now())).toBeUndefined();
    expect(await live.store.oauth.find('Client', used, now())).toBeDefined();
  });

  it('refreshes through a store fault: 503 temporarily_unavailable with Retry-After, the retry succeeds, nothing revoked', async ({
    skip: s,
  }) => {
    if (skip) return s();
    const clientId = String((await register(live)).body.client_id);
    const first = await exchange(live, await authorize(live, clientId, cookie, account));
    expect(first.status).toBe(200);
    const oauth = live.store.oauth;
    const { upsert, rotate } = oauth;
    // The database goes away when the new access token is to be written (after the library has
    // consumed the old refresh token and saved the new one).
    let failures = 0;
    oauth.upsert = async (row) => {
      if (row.model === 'AccessToken' && failures++ === 0) throw new StoreUnavailableError('cut');
      return upsert.call(oauth, row);
    };
    oauth.rotate = async (consumed, rows) => {
      if (failures++ === 0) throw new StoreUnavailableError('cut');
      return rotate.call(oauth, consumed, rows);
    };
    try {
      const cut = await fetch(`${live.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: first.body.refresh_token!,
          client_id: clientId,
        }),
      });
      expect(cut.status).toBe(503);
      expect(cut.headers.get('retry-after')).toBe('1');
      expect(((await cut.json()) as Record<string, string>).error).toBe('temporarily_unavailable');
    } finally {
      oauth.upsert = upsert;
      oauth.rotate = rotate;
    }
    const retry = await token(live, {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token!,
      client_id: clientId,
    });
    expect(retry.status).toBe(200);
    expect((await callTool(live, retry.body.access_token!, 'get_account')).status).toBe(200);
    expect((await callTool(live, first.body.access_token!, 'get_account')).status).toBe(200);
    // Rotation still holds: the spent token, used again, ends the grant.
    const reused = await token(live, {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token!,
      client_id: clientId,
    });
    expect(reused.body.error).toBe('invalid_grant');
    expect((await callTool(live, retry.body.access_token!, 'get_account')).status).toBe(401);
  });

  it('answers a code exchange during a store fault 503, and the code still works', async ({ skip: s }) => {
    if (skip) return s();
    const clientId = String((await register(live)).body.client_id);
    const code = await authorize(live, clientId, cookie, account);
    const oauth = live.store.oauth;
    const { find } = oauth;
    oauth.find = async () => {
      throw new StoreUnavailableError('cut');
    };
    let cut: Awaited<ReturnType<typeof exchange>>;
    try {
      cut = await exchange(live, code);
    } finally {
      oauth.find = find;
    }
    expect(cut.status).toBe(503);
    expect(cut.body.error).toBe('temporarily_unavailable');
    expect((await exchange(live, code)).status).toBe(200);
  });

  it('lists the granted scopes in the token answer and gives an opaque, stable sub, never the email', async ({
    skip: s,
  }) => {
    if (skip) return s();
    const subs: unknown[] = [];
    for (let i = 0; i < 2; i++) {
      const clientId = String((await register(live)).body.client_id);
      const t = await exchange(
        live,
        await authorize(live, clientId, cookie, account, { scope: 'openid offline_access mcp', nonce: 'n0' }),
      );
      expect(t.status).toBe(200);
      expect(t.body.id_token).toBeTruthy();
      expect(t.body.refresh_token).toBeTruthy();
      expect(t.body.scope).toBe('openid offline_access mcp');
      const claims = idTokenClaims(t.body.id_token!);
      expect(String(claims.sub)).not.toMatch(/@|email|eve/i);
      expect(String(claims.sub)).toMatch(/^[\w-]{43}$/);
      subs.push(claims.sub);
      const refreshed = await token(live, {
        grant_type: 'refresh_token',
        refresh_token: t.body.refresh_token!,
        client_id: clientId,
      });
      expect(refreshed.body.scope).toBe('openid offline_access mcp');
      expect(idTokenClaims(refreshed.body.id_token!).sub).toBe(claims.sub);
    }
    expect(subs[0]).toBe(subs[1]);
  });

  it("says invalid_token in /mcp's challenge when a token was presented, and nothing when none was", async ({
    skip: s,
  }) => {
    if (skip) return s();
    const metadata = `resource_metadata="${live.url}/.well-known/oauth-protected-resource/mcp"`;
    const bad = await callTool(live, 'x'.repeat(43), 'get_account');
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe(`Bearer error="invalid_token", ${metadata}`);
    expect(bad.body.code).toBe('invalid_api_key');
    const none = await fetch(`${live.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(none.headers.get('www-authenticate')).toBe(`Bearer ${metadata}`);
  });
});

describe.each(backends)('OAuth registration limits on %s', (backend) => {
  let skip = false;
  beforeAll(async () => {
    if (backend === 'postgres' && !(await postgresAvailable())) skip = true;
  });

  it('answers the 21st registration from one address within 10 minutes 429 with Retry-After', async ({
    skip: s,
  }) => {
    if (skip) return s();
    const live = await liveServer(backend);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await register(live)).status);
      expect(statuses).toEqual(Array(20).fill(201));
      const res = await fetch(`${live.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT] }),
      });
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(600);
    } finally {
      await live.close();
    }
  });

  it('keeps at most the ceiling of unused registrations, the oldest going first', async ({ skip: s }) => {
    if (skip) return s();
    const live = await liveServer(backend, { maxUnusedClients: 5, registrationsPerAddress: 0 });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const r = await register(live);
        expect(r.status).toBe(201);
        ids.push(String(r.body.client_id));
        // created_at is in seconds: keep the order of registrations visible to the ceiling.
        if (i < 3) await new Promise((r) => setTimeout(r, 1100));
      }
      const kept = [];
      for (const id of ids) kept.push((await live.store.oauth.find('Client', id, now())) !== undefined);
      expect(kept).toEqual([false, false, false, true, true, true, true, true]);
    } finally {
      await live.close();
    }
  });
});
