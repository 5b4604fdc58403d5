/** What the authorization server refuses, on both backends: each misuse of a step of the flow. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/domain/clock.js';
import { accountWithKey } from '../helpers.js';
import { postgresAvailable } from '../postgres.js';
import {
  authorize,
  authorizeUrl,
  callTool,
  csrfOf,
  exchange,
  Jar,
  pkce,
  REDIRECT,
  register,
  token,
} from './flow.js';
import { type Backend, type Live, liveServer, person } from './harness.js';

const backends: Backend[] = ['sqlite', 'postgres'];

describe.each(backends)('OAuth refusals on %s', (backend) => {
  let live: Live;
  let skip = false;
  let mine: string;
  let theirs: string;
  let cookie: string;
  let clientId: string;

  beforeAll(async () => {
    if (backend === 'postgres' && !(await postgresAvailable())) {
      skip = true;
      return;
    }
    live = await liveServer(backend);
    mine = (await accountWithKey(live.services, { name: 'Mine' })).accountId;
    theirs = (await accountWithKey(live.services, { name: 'Theirs' })).accountId;
    cookie = live.identity.signIn(await person(live, 'bob@example.com', [mine]));
    clientId = String((await register(live)).body.client_id);
  });
  afterAll(async () => live?.close());

  const tokensFor = async (accountId = mine) => {
    const code = await authorize(live, clientId, cookie, accountId);
    const t = await exchange(live, code);
    expect(t.status).toBe(200);
    return t.body as Record<string, string>;
  };

  it('a wrong PKCE verifier gets no token', async ({ skip: s }) => {
    if (skip) return s();
    const code = await authorize(live, clientId, cookie, mine);
    const t = await exchange(live, code, { code_verifier: pkce().verifier });
    expect(t.status).toBe(400);
    expect(t.body.error).toBe('invalid_grant');
  });

  it('a code used twice gets no second token, and the first one is revoked with its grant', async ({
    skip: s,
  }) => {
    if (skip) return s();
    const code = await authorize(live, clientId, cookie, mine);
    const first = await exchange(live, code);
    expect(first.status).toBe(200);
    expect((await callTool(live, first.body.access_token!, 'get_account')).status).toBe(200);
    const again = await exchange(live, code);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    expect((await callTool(live, first.body.access_token!, 'get_account')).status).toBe(401);
  });

  it('a redirect URI that was not registered is refused without a redirect to it', async ({ skip: s }) => {
    if (skip) return s();
    const { challenge } = pkce();
    const q = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: 'https://evil.example/callback',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const res = await fetch(`${live.url}/oauth/authorize?${q}`, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(JSON.stringify(await res.json())).toContain('redirect_uri');
  });

  it('registration refuses http redirect URIs off loopback, and drops unknown scopes', async ({
    skip: s,
  }) => {
    if (skip) return s();
    const refused = await register(live, { redirect_uris: ['http://evil.example/cb'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_redirect_uri');
    const kept = await register(live, { scope: 'claudeai' });
    expect(kept.status).toBe(201);
    expect(kept.body.scope).toBeUndefined();
  });

  it('a token for another resource is refused (invalid_target), at authorize and at the token endpoint', async ({
    skip: s,
  }) => {
    if (skip) return s();
    const jar = new Jar();
    jar.add(cookie);
    const { url } = authorizeUrl(live, clientId, {
      resource: 'https://other.example/mcp',
      scope: '',
      state: '',
    });
    const res = await jar.fetch(url);
    const location = new URL(res.headers.get('location') ?? `${live.url}/`, live.url);
    expect(
      location.href.startsWith(REDIRECT)
        ? location.searchParams.get('error')
        : ((await res.json()) as Record<string, string>).error,
    ).toBe('invalid_target');
    const code = await authorize(live, clientId, cookie, mine);
    const t = await exchange(live, code, { resource: 'https://other.example/mcp' });
    expect(t.status).toBe(400);
    expect(t.body.error).toBe('invalid_target');
  });

  it('a reused refresh token revokes the grant: neither its access tokens nor its newer refresh token work', async ({
    skip: s,
  }) => {
    if (skip) return s();
    const t = await tokensFor();
    const r1 = await token(live, {
      grant_type: 'refresh_token',
      refresh_token: t.refresh_token!,
      client_id: clientId,
    });
    expect(r1.status).toBe(200);
    const reuse = await token(live, {
      grant_type: 'refresh_token',
      refresh_token: t.refresh_token!,
      client_id: clientId,
    });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    expect((await callTool(live, r1.body.access_token!, 'get_account')).status).toBe(401);
    const r2 = await token(live, {
      grant_type: 'refresh_token',
      refresh_token: r1.body.refresh_token!,
      client_id: clientId,
    });
    expect(r2.status).toBe(400);
  });

  it('the revocation endpoint (RFC 7009) ends the grant at once', async ({ skip: s }) => {
    if (skip) return s();
    const t = await tokensFor();
    expect((await callTool(live, t.access_token!, 'get_account')).status).toBe(200);
    const res = await fetch(`${live.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: t.access_token!, client_id: clientId }),
    });
    expect(res.status).toBe(200);
    expect((await callTool(live, t.access_token!, 'get_account')).status).toBe(401);
    const r = await token(live, {
      grant_type: 'refresh_token',
      refresh_token: t.refresh_token!,
      client_id: clientId,
    });
    expect(r.status).toBe(400);
  });

  it('a removed client can neither refresh nor authorize', async ({ skip: s }) => {
    if (skip) return s();
    const own = String((await register(live)).body.client_id);
    const code = await authorize(live, own, cookie, mine);
    const t = await exchange(live, code);
    await live.store.oauth.destroy('Client', own);
    const r = await token(live, {
      grant_type: 'refresh_token',
      refresh_token: t.body.refresh_token!,
      client_id: own,
    });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('invalid_client');
    await expect(authorize(live, own, cookie, mine)).rejects.toThrow(/authorize answered 400/);
  });

  it('consent for an account the person does not belong to is refused, and makes no grant', async ({
    skip: s,
  }) => {
    if (skip) return s();
    const before = (await live.store.keys.list(theirs)).length;
    await expect(authorize(live, clientId, cookie, theirs)).rejects.toThrow(/no redirect to the client: 403/);
    expect((await live.store.keys.list(theirs)).length).toBe(before);
  });

  it('consent without the CSRF token, from another browser, or replayed is refused', async ({ skip: s }) => {
    if (skip) return s();
    const jar = new Jar();
    jar.add(cookie);
    const { challenge } = pkce();
    const q = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const consent = new URL(
      (await jar.fetch(`${live.url}/oauth/authorize?${q}`)).headers.get('location')!,
      live.url,
    );
    const form = (extra: Record<string, string>) => ({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ account_id: mine, decision: 'allow', ...extra }),
    });
    const _csrf = csrfOf(await (await jar.fetch(consent.href)).text());
    expect((await jar.fetch(consent.href, form({}))).status).toBe(403);
    // Another browser: signed in, with its own CSRF cookie and token, but without this interaction's cookie.
    const otherJar = new Jar();
    otherJar.add(cookie);
    const otherCsrf = csrfOf(await (await otherJar.fetch(`${live.url}/console/sign-in`)).text());
    const other = await otherJar.fetch(consent.href, form({ _csrf: otherCsrf }));
    expect(other.status).toBe(400);
    // This browser, signed out: to the sign-in page, coming back here.
    const signedOut = jar
      .header()
      .split('; ')
      .filter((c) => !c.startsWith('tg_test_session='))
      .join('; ');
    const anonymous = await fetch(consent.href, { redirect: 'manual', headers: { cookie: signedOut } });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe(
      `/console/sign-in?return_to=${encodeURIComponent(consent.pathname)}`,
    );
    const allowed = await jar.fetch(consent.href, form({ _csrf }));
    expect(allowed.status).toBe(303);
    expect((await jar.fetch(consent.href, form({ _csrf }))).status).toBe(400);
  });

  it('hostile client names are shown as text; grants show in keys lists, marked, and audited as user via client', async ({
    skip: s,
  }) => {
    if (skip) return s();
    const hostile = String(
      (await register(live, { client_name: '<script>alert(1)</script>"&' })).body.client_id,
    );
    const jar = new Jar();
    jar.add(cookie);
    const { challenge } = pkce();
    const q = new URLSearchParams({
      client_id: hostile,
      response_type: 'code',
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const consent = new URL(
      (await jar.fetch(`${live.url}/oauth/authorize?${q}`)).headers.get('location')!,
      live.url,
    );
    const page = await (await jar.fetch(consent.href)).text();
    expect(page).not.toContain('<script>');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;');

    await tokensFor();
    const keys = await live.services.keys.list(mine);
    if (!keys.ok) throw new Error(keys.error.message);
    const grants = keys.value.filter((k) => k.hint === 'oauth grant');
    expect(grants.length).toBeGreaterThan(0);
    expect(grants[0]!.name).toBe('OAuth: Test connector');
    const audit = await live.store.audit.list({ limit: 500, accountId: mine });
    const created = audit.find((e) => e.action === 'key.create' && e.targetId === grants[0]!.id);
    expect(created?.actor).toBe(`user:bob@example.com via oauth:${clientId}`);
    // Another account's grant cannot be revoked through this one.
    expect(await live.oauth.revokeGrant(grants[0]!.id, theirs, 'user:mallory@example.com')).toBe(false);
  });
});

describe('an expired access token', () => {
  let live: Live;
  afterAll(async () => live?.close());

  it('is refused once its lifetime has passed, though it was remembered as valid', async () => {
    const clock = new FixedClock(Date.now());
    live = await liveServer('sqlite', { accessTokenTtl: 60, clock });
    const accountId = (await accountWithKey(live.services)).accountId;
    const cookie = live.identity.signIn(await person(live, 'eve@example.com', [accountId]));
    const clientId = String((await register(live)).body.client_id);
    const t = await exchange(live, await authorize(live, clientId, cookie, accountId));
    expect(Number(t.body.expires_in)).toBe(60);
    expect((await callTool(live, t.body.access_token!, 'get_account')).status).toBe(200);
    // The clock was set before the server started; an hour on is past any token it issued.
    clock.advance(3600);
    expect((await callTool(live, t.body.access_token!, 'get_account')).status).toBe(401);
  });

  it('lives at most an hour, whatever is configured', async () => {
    await live?.close();
    live = await liveServer('sqlite', { accessTokenTtl: 24 * 3600 });
    const accountId = (await accountWithKey(live.services)).accountId;
    const cookie = live.identity.signIn(await person(live, 'eve@example.com', [accountId]));
    const clientId = String((await register(live)).body.client_id);
    const t = await exchange(live, await authorize(live, clientId, cookie, accountId));
    expect(Number(t.body.expires_in)).toBe(3600);
  });
});
