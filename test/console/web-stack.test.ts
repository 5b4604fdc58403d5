/**
 * One web stack for the console and OAuth: the security headers on every answer of both surfaces
 * (routes read from Fastify itself, redirects included), CSRF on every unsafe console route by
 * construction and bound to the session, return_to values that cannot break a redirect, and the
 * consent page as a console page (its one escaper, a bounded client name, its CSP).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { safeReturnTo } from '../../src/service/console.js';
import { accountWithKey } from '../helpers.js';
import { Jar, pkce, REDIRECT, register } from '../oauth/flow.js';
import { type Live, liveServer, person } from '../oauth/harness.js';
import { type ConsoleApp, consoleApp, consoleLink, registeredRoutes } from './console-app-helpers.js';
import { ConsoleClient, forms } from './console-client-helpers.js';
import { csrfTokenOf, type World, world } from './security-helpers.js';

const SURFACES = /^\/(console|oauth)(\/|$)|^\/\.well-known\/oauth-/;
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A concrete URL for a route's path: parameters and wildcards filled in. */
const concrete = (path: string, accountId = 'acc_none') =>
  path
    .replace(':accountId', accountId)
    .replace(/:[A-Za-z]+/g, 'x')
    .replace(/\*$/, 'authorize');

function expectWebHeaders(headers: Record<string, unknown>, https: boolean, what: string) {
  expect(headers['x-content-type-options'], what).toBe('nosniff');
  expect(headers['referrer-policy'], what).toBeTruthy();
  expect(headers['permissions-policy'], what).toBeTruthy();
  expect(String(headers['content-security-policy']), what).toContain("frame-ancestors 'none'");
  expect(String(headers['content-security-policy']), what).not.toContain('unsafe-inline');
  if (https) expect(headers['strict-transport-security'], what).toBeTruthy();
  else expect(headers['strict-transport-security'], what).toBeUndefined();
}

async function walk(app: FastifyInstance, https: boolean) {
  const routes = registeredRoutes(app).filter((r) => SURFACES.test(r.path) && r.method !== 'HEAD');
  expect(routes.length).toBeGreaterThan(20);
  let redirects = 0;
  for (const r of routes) {
    const res = await app.inject({ method: r.method as 'GET', url: concrete(r.path) });
    if (res.statusCode >= 300 && res.statusCode < 400) redirects++;
    expectWebHeaders(res.headers, https, `${r.method} ${r.path} -> ${res.statusCode}`);
  }
  expect(redirects).toBeGreaterThan(0);
}

describe('security headers on every console and OAuth answer', () => {
  let live: Live;
  let secure: Live;
  beforeAll(async () => {
    live = await liveServer('sqlite');
    secure = await liveServer('sqlite', { publicUrl: 'https://toolgate.example' });
  });
  afterAll(async () => {
    await live?.close();
    await secure?.close();
  });

  it('over http: every route of both surfaces, redirects included, no HSTS', async () => {
    await walk(live.app, false);
  });

  it('with an https public URL: the same, and HSTS', async () => {
    await walk(secure.app, true);
  });
});

describe('the consent page is a console page', () => {
  let live: Live;
  let cookie: string;
  beforeAll(async () => {
    live = await liveServer('sqlite');
    const { accountId } = await accountWithKey(live.services);
    cookie = live.identity.signIn(await person(live, 'ann@example.com', [accountId]));
  });
  afterAll(async () => live?.close());

  it('at /console/consent/:uid, a bidi override shown as U+FFFD, the name cut at 100, the form allowed to the client', async () => {
    const name = `\u202Eevil ${'x'.repeat(300)}`;
    // Registration refuses a name past 100 characters; a client stored otherwise (a Client ID
    // Metadata Document, an older row) may still carry one: the page bounds what it shows.
    expect((await register(live, { client_name: name })).status).toBe(400);
    const clientId = String((await register(live, { client_name: 'short' })).body.client_id);
    const row = (await live.store.oauth.find('Client', clientId, Math.floor(Date.now() / 1000)))!;
    await live.store.oauth.upsert({
      ...row,
      payload: JSON.stringify({ ...JSON.parse(row.payload), client_name: name }),
    });
    const jar = new Jar();
    jar.add(cookie);
    const q = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    });
    const location = (await jar.fetch(`${live.url}/oauth/authorize?${q}`)).headers.get('location')!;
    expect(location).toMatch(/^\/console\/consent\/[\w-]+$/);
    const res = await jar.fetch(new URL(location, live.url).href);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(html).not.toContain('\u202E');
    expect(html).toContain(`\uFFFDevil ${'x'.repeat(93)}\u2026`);
    expect(html).not.toContain('x'.repeat(94));
    expect(html).toContain('/console/assets/console.css');
    expect(html).not.toContain('<style');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("form-action 'self' http://127.0.0.1:9");
    expect(csp).toContain("frame-ancestors 'none'");
  });
});

describe('CSRF on the console', () => {
  let h: ConsoleApp;
  let w: World;
  beforeAll(async () => {
    h = await consoleApp('sqlite');
    w = await world(h);
  });
  afterAll(async () => h?.close());

  it('every unsafe route refuses a request without the token (403), signed in or not', async () => {
    const a = await w.signIn(w.a.owner);
    await a.get(`/console/a/${w.a.accountId}/keys`); // the CSRF cookie
    const routes = registeredRoutes(h.app).filter(
      (r) => r.path.startsWith('/console') && UNSAFE.has(r.method),
    );
    expect(routes.length).toBeGreaterThanOrEqual(6);
    for (const r of routes) {
      for (const cookie of [a.cookieHeader(), '']) {
        const res = await h.app.inject({
          method: r.method as 'POST',
          url: concrete(r.path, w.a.accountId),
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
          payload: 'name=x&email=x%40example.com&decision=allow',
        });
        expect(res.statusCode, `${r.method} ${r.path}`).toBe(403);
      }
    }
  });

  it("a token from another session (with that session's CSRF cookie) is refused, and nothing is made", async () => {
    const a = await w.signIn(w.a.owner);
    const b = await w.signIn(w.a.owner);
    const keysOfB = await b.get(`/console/a/${w.a.accountId}/keys`);
    const token = csrfTokenOf(keysOfB.body)!;
    const csrfCookie = [...b.jar].find(([k]) => k.includes('csrf'))!;
    const sessionOfA = [...a.jar].find(([k]) => k.includes('session'))!;
    const before = (await h.store.keys.list(w.a.accountId)).length;
    const post = (session: [string, string]) =>
      h.app.inject({
        method: 'POST',
        url: `/console/a/${w.a.accountId}/keys`,
        headers: {
          cookie: `${session.join('=')}; ${csrfCookie.join('=')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        payload: new URLSearchParams({ _csrf: token, name: 'crossed' }).toString(),
      });
    expect((await post(sessionOfA)).statusCode).toBe(403);
    expect((await h.store.keys.list(w.a.accountId)).length).toBe(before);
    // The same token with its own session is taken.
    const own = [...b.jar].find(([k]) => k.includes('session'))!;
    expect((await post(own)).statusCode).toBeLessThan(400);
  });
});

describe('return_to', () => {
  const HOSTILE = [
    '/console/\u3000x',
    '/console/\u2028x',
    '//evil',
    '/\\evil',
    'https://evil',
    '/console/\r\nSet-Cookie: x=1',
  ];

  it('is a same-origin ASCII path or nothing', () => {
    expect(safeReturnTo('/console/\u3000x')).toBe('/console/%E3%80%80x');
    expect(safeReturnTo('/console/\u2028x')).toBe('/console/%E2%80%A8x');
    for (const bad of ['//evil', '/\\evil', 'https://evil', '/console/\r\nx', '/\t/evil'])
      expect(safeReturnTo(bad), bad).toBeNull();
  });

  let h: ConsoleApp;
  let w: World;
  beforeAll(async () => {
    h = await consoleApp('sqlite');
    w = await world(h);
  });
  afterAll(async () => h?.close());

  it('signed in, /console/sign-in?return_to= never answers 500 and never leaves the origin', async () => {
    const a = await w.signIn(w.a.owner);
    for (const value of HOSTILE) {
      const res = await h.app.inject({
        url: `/console/sign-in?return_to=${encodeURIComponent(value)}`,
        headers: { cookie: a.cookieHeader() },
      });
      expect(res.statusCode, value).toBeLessThan(500);
      const location = res.headers.location;
      if (location) expect(String(location), value).toMatch(/^\/(?![/\\])[\x21-\x7e]*$/);
    }
  });

  it('a sign-in link asked for with a hostile return_to signs in (not 500), and lands on this origin', async () => {
    for (const [i, value] of HOSTILE.entries()) {
      // Two people, so that no email reaches its limit of links.
      const email = i % 2 === 0 ? w.a.owner : w.b.owner;
      const c = new ConsoleClient(h.url);
      const page = await c.get(`/console/sign-in?return_to=${encodeURIComponent(value)}`);
      const form = forms(page.body, page.url).find((f) => f.method === 'POST')!;
      const before = h.sink.to(email).length;
      await c.submit(form, { email });
      const mail = await h.sink.waitFor(email, before + 1);
      const landing = await c.get(new URL(consoleLink(mail)).pathname + new URL(consoleLink(mail)).search);
      const confirm = forms(landing.body, landing.url).find((f) => f.method === 'POST')!;
      const signedIn = await c.submit(confirm);
      expect(signedIn.status, value).not.toBe(500);
      expect(new URL(signedIn.url).origin, value).toBe(h.url);
      expect(
        [...c.jar.keys()].some((k) => k.includes('session')),
        value,
      ).toBe(true);
    }
  });
});
