/**
 * The console's abuse cases, with plain fetch against the app as the server builds it (listening on
 * a loopback port, a fixed clock the tests move, a real SMTP sink), on SQLite and on PostgreSQL:
 * CSRF on every form route, links single-use and 15 minutes, the sign-in answer the same for known
 * and unknown emails, another account's ids 404 on every route (walked from the routes the app
 * registered), session cookie flags, sign-in limits, hostile names escaped, sessions ended.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LINKS_PER_ADDRESS, LINKS_PER_EMAIL } from '../../src/console/pages/sign-in.js';
import { postgresAvailable } from '../postgres.js';
import {
  addUser,
  askForLink,
  type Backend,
  type ConsoleApp,
  consoleApp,
  consoleLink,
  consoleRoutes,
  followLink,
  openLink,
} from './console-app-helpers.js';
import { ConsoleClient, forms, formWithButton, type Page, pageText } from './console-client-helpers.js';
import { csrfTokenOf, type World, world } from './security-helpers.js';

const backends: Backend[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];

/** Whether the page is a signed-in console page (its Overview, or the account chooser). */
const signedInPage = (p: Page) =>
  p.status === 200 &&
  !/\/console\/sign-in/.test(p.url) &&
  /Overview|Choose an account/i.test(pageText(p.body));
const signedIn = async (c: ConsoleClient) => signedInPage(await c.get('/console/'));

describe.each(backends)('the console refuses abuse, on %s', (backend) => {
  let h: ConsoleApp;
  let w: World;

  beforeAll(async () => {
    h = await consoleApp(backend);
    w = await world(h);
  }, 60_000);
  afterAll(() => h?.close());

  it('answers 403 to a POST without its CSRF token, or with a forged one, on every console form route', async () => {
    const owner = await w.signIn(w.a.owner);
    const posts = consoleRoutes(h.app).filter((r) => r.method !== 'GET');
    expect(posts.length, 'the console has forms').toBeGreaterThan(3);
    const stranger = new ConsoleClient(h.url);
    for (const route of posts) {
      const path = w.fill(route.path, 'own')!;
      for (const client of [owner, stranger])
        for (const form of [{}, { _csrf: 'forged-token-0123456789' }] as Record<string, string>[]) {
          const res = await client.request(route.method, path, {
            form: { ...form, ...w.plausibleFields() },
            follow: false,
          });
          expect(res.status, `${route.method} ${route.path} (${path}) with ${JSON.stringify(form)}`).toBe(
            403,
          );
        }
    }
    // Nothing was done: the spare key still answers, the member is still there.
    expect(await w.keyWorks(w.a.spareKey)).toBe(true);
    expect((await h.services.users.list(w.a.accountId)).ok).toBe(true);
    expect(await w.userIds(w.a.accountId)).toContain(w.a.memberUserId);
  });

  it('takes a sign-in link once', async () => {
    const mail = await w.link(w.a.owner);
    const first = new ConsoleClient(h.url);
    expect(signedInPage(await followLink(first, mail))).toBe(true);
    const second = new ConsoleClient(h.url);
    const replay = await followLink(second, mail);
    expect(signedInPage(replay)).toBe(false);
    expect(second.jar.size === 0 || !(await signedIn(second))).toBe(true);
  });

  it('spends no link on its GET (mail scanners and link previews fetch links), and signs no one in by it', async () => {
    const mail = await w.link(w.a.owner);
    for (let i = 0; i < 3; i++) {
      const scanner = new ConsoleClient(h.url);
      const opened = await openLink(scanner, mail);
      expect(opened.status).toBe(200);
      expect(opened.headers.get('referrer-policy')).toBe('no-referrer');
      expect(opened.setCookies.some((c) => /^(__Host-)?toolgate_session=/.test(c))).toBe(false);
      expect(await signedIn(scanner)).toBe(false);
    }
    const person = new ConsoleClient(h.url);
    expect(signedInPage(await followLink(person, mail))).toBe(true);
    expect(signedInPage(await followLink(new ConsoleClient(h.url), mail))).toBe(false);
    // A hostile token is refused before any lookup, and never written back into the page.
    const hostile = new URL(mail);
    hostile.searchParams.set('token', '"><script>alert(1)</script>aaaaaaaaaaaaaaaaaaaa');
    const refused = await openLink(new ConsoleClient(h.url), hostile.href);
    expect(refused.status).toBe(400);
    expect(refused.body).not.toContain('<script>alert');
  });

  it('takes a link up to 15 minutes old and refuses it after', async () => {
    const young = await w.link(w.a.owner);
    h.clock.advance(15 * 60 - 1);
    expect(signedInPage(await followLink(new ConsoleClient(h.url), young))).toBe(true);
    const old = await w.link(w.a.owner);
    h.clock.advance(15 * 60 + 1);
    const late = new ConsoleClient(h.url);
    expect(signedInPage(await followLink(late, old))).toBe(false);
    expect(await signedIn(late)).toBe(false);
  });

  it('mails an invitation that names who invited, and signs its person in within 7 days, not after', async () => {
    const invite = async (email: string) => {
      const owner = await w.signIn(w.a.owner);
      const members = await owner.get(`/console/a/${w.a.accountId}/members`);
      const sent = await owner.submit(formWithButton(members, /invite/i), { email });
      expect(pageText(sent.body)).toContain('within 7 days');
      return h.sink.waitFor(email);
    };
    const early = `early-${backend}@example.com`;
    const mail = await invite(early);
    expect(mail.text).toContain(`${w.a.owner} invited you to the account "${w.a.name}"`);
    expect(mail.text).toContain('The link works once, within 7 days.');
    // Six days and 23 hours later: it still signs in (once).
    h.clock.advance(7 * 24 * 3600 - 3600);
    expect(signedInPage(await followLink(new ConsoleClient(h.url), consoleLink(mail)))).toBe(true);
    expect(signedInPage(await followLink(new ConsoleClient(h.url), consoleLink(mail)))).toBe(false);
    // Seven days and a second: no longer.
    const late = await invite(`late-${backend}@example.com`);
    h.clock.advance(7 * 24 * 3600 + 1);
    const person = new ConsoleClient(h.url);
    expect(signedInPage(await followLink(person, consoleLink(late)))).toBe(false);
    expect(await signedIn(person)).toBe(false);
    // A sign-in link the person asks for still lasts 15 minutes (covered above): only invitations wait longer.
  });

  it('answers the sign-in form byte for byte alike for known and unknown emails, and mails only the known', async () => {
    const known = w.a.owner;
    const unknown = `nobody-${backend}@example.com`;
    const before = { known: h.sink.to(known).length, unknown: h.sink.to(unknown).length };
    const answers = [];
    for (const email of [known, unknown, known, unknown]) {
      const c = new ConsoleClient(h.url);
      c.headers = { 'x-forwarded-for': `198.51.100.${answers.length + 1}` };
      const p = await askForLink(c, email);
      answers.push({
        status: p.status,
        url: p.url,
        body: p.body.replace(csrfTokenOf(p.body) ?? '\u0000', 'TOKEN'),
      });
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[3]).toEqual(answers[2]);
    expect(pageText(answers[0]!.body)).toMatch(/check your email/i);
    await h.sink.waitFor(known, before.known + 2);
    expect(h.sink.to(unknown).length).toBe(before.unknown);
  });

  it("answers 404 to a user of account A for every console route carrying account B's ids", async () => {
    const a = await w.signIn(w.a.owner);
    const token = await w.csrfFor(a);
    // Every route with an id in its path (the assets' file names are public, no account's).
    const routes = consoleRoutes(h.app).filter(
      (r) => r.path.includes(':') && !r.path.startsWith('/console/assets/'),
    );
    expect(routes.length, 'the console has routes with ids').toBeGreaterThan(3);
    const tried: string[] = [];
    for (const route of routes)
      for (const variant of ['other', 'mixed'] as const) {
        const path = w.fill(route.path, variant);
        if (path === undefined || tried.includes(`${route.method} ${path}`)) continue;
        tried.push(`${route.method} ${path}`);
        const res =
          route.method === 'GET'
            ? await a.get(path, { follow: false })
            : await a.request(route.method, path, {
                form: { _csrf: token, ...w.plausibleFields() },
                follow: false,
              });
        expect(res.status, `${route.method} ${route.path} as ${path}`).toBe(404);
        expect(res.body).not.toContain(w.b.name);
      }
    await expectBUntouched();
  });

  it("answers 404 to a user of account A for every form of A's pages carrying account B's ids", async () => {
    const a = await w.signIn(w.a.owner);
    let swapped = 0;
    for (const page of await w.crawl(a)) {
      for (const form of forms(page.body, page.url).filter((f) => f.method === 'POST')) {
        const fields = w.swapIds(form.fields);
        if (!fields) continue;
        swapped++;
        const res = await a.request('POST', form.action, { form: fields, follow: false });
        expect(res.status, `${form.action} with ${JSON.stringify(fields)}`).toBe(404);
      }
    }
    // At least revoking a key and removing or re-roling a member carry ids in their forms or paths.
    expect(swapped + consoleRoutes(h.app).filter((r) => /:(?!acc)/i.test(r.path)).length).toBeGreaterThan(0);
    await expectBUntouched();
  });

  async function expectBUntouched(): Promise<void> {
    expect(await w.keyWorks(w.b.key)).toBe(true);
    expect(await w.userIds(w.b.accountId)).toEqual(
      expect.arrayContaining([w.b.ownerUserId, w.b.memberUserId]),
    );
    const account = await h.services.accounts.get(w.b.accountId);
    expect(account.ok && account.value.name).toBe(w.b.name);
  }

  it("refuses a member every owner's action, with a valid token: keys, members, roles", async () => {
    const member = await w.signIn(w.a.member);
    const token = await w.csrfFor(member);
    const keysBefore = await w.keyCount(w.a.accountId);
    const owners = consoleRoutes(h.app).filter(
      (r) => r.method === 'POST' && /\/(keys|members)/.test(r.path) && r.path.includes(':accountId'),
    );
    expect(owners.length).toBeGreaterThanOrEqual(3);
    for (const route of owners) {
      const path = w.fill(route.path, 'own')!;
      const res = await member.request('POST', path, {
        form: { _csrf: token, ...w.plausibleFields(), role: 'owner' },
        follow: false,
      });
      // Told why: the action is for the account's owners (a member belongs to it; B's pages stay 404).
      expect(res.status, `${route.path} as a member`).toBe(403);
      expect(pageText(res.body), route.path).toContain(`This page is for the owners of ${w.a.name}`);
    }
    // Nothing changed: no key made, the spare key works, the member is still a member.
    expect(await w.keyCount(w.a.accountId)).toBe(keysBefore);
    expect(await w.keyWorks(w.a.spareKey)).toBe(true);
    const users = await h.services.users.list(w.a.accountId);
    expect(users.ok && users.value.find((u) => u.id === w.a.memberUserId)?.role).toBe('member');
  });

  it('shows a new key once, on a page no cache keeps', async () => {
    const owner = await w.signIn(w.a.owner);
    const page = await owner.get(`/console/a/${w.a.accountId}/keys`);
    const create = forms(page.body, page.url).find((f) => f.buttons.includes('Create key'));
    expect(create, 'a "Create key" form').toBeDefined();
    const created = await owner.submit(create!, { name: 'shown once' });
    const key = /\btg_[0-9A-Za-z]{11}\b/.exec(created.body)?.[0];
    expect(key, 'the new key on the page').toBeDefined();
    expect(created.headers.get('cache-control') ?? '').toMatch(/no-store/);
    expect(await w.keyWorks(key!)).toBe(true);
    const again = await owner.get(`/console/a/${w.a.accountId}/keys`);
    expect(again.body).not.toContain(key!);
    expect(again.body).toContain(key!.slice(-4));
  });

  it('ends a session at sign-out: its cookie opens nothing after', async () => {
    const c = await w.signIn(w.a.owner);
    const cookie = c.cookieHeader();
    const page = await c.get(`/console/a/${w.a.accountId}/`);
    const signOut = forms(page.body, page.url).find((f) => f.buttons.some((b) => /sign out/i.test(b)));
    expect(signOut, 'a "Sign out" form on the Overview').toBeDefined();
    await c.submit(signOut!);
    const replay = await fetch(`${h.url}/console/a/${w.a.accountId}/`, {
      headers: { cookie },
      redirect: 'manual',
    });
    expect(replay.status === 200 && /Overview/.test(await replay.text())).toBe(false);
  });

  it('ends a session when its membership is removed', async () => {
    const email = `removed-${backend}@example.com`;
    const user = await addUser(h.services, w.a.accountId, email, 'member');
    const c = await w.signIn(email);
    expect(await signedIn(c)).toBe(true);
    const removed = await h.services.users.remove(user.id);
    expect(removed.ok).toBe(true);
    expect(await signedIn(c)).toBe(false);
    expect((await c.get(`/console/a/${w.a.accountId}/`, { follow: false })).status).not.toBe(200);
  });

  it('ends a session idle for 24 hours, and any session 30 days old', async () => {
    const idle = await w.signIn(w.a.owner);
    h.clock.advance(24 * 3600 - 60);
    expect(await signedIn(idle)).toBe(true);
    h.clock.advance(24 * 3600 + 1);
    expect(await signedIn(idle)).toBe(false);
    // Seen every 23 hours, never idle: it still ends 30 days after it began.
    const busy = await w.signIn(w.a.owner);
    for (let step = 1; step <= 31; step++) {
      h.clock.advance(23 * 3600);
      expect(await signedIn(busy), `after ${step * 23} hours`).toBe(true);
    }
    h.clock.advance(6 * 3600);
    expect(await signedIn(busy), 'after 719 hours').toBe(true);
    h.clock.advance(3600 + 1);
    expect(await signedIn(busy), 'after 30 days and a second').toBe(false);
  });

  it('renders hostile account and key names escaped (markup, quotes, bidi overrides)', async () => {
    const c = await w.signIn(w.hostile.owner);
    for (const path of ['/', '/keys', '/usage', '/billing', '/members']) {
      const page = await c.get(`/console/a/${w.hostile.accountId}${path}`);
      if (page.status === 404) continue;
      expect(page.status, path).toBe(200);
      expect(page.body, path).not.toContain('<script>alert(');
      expect(page.body, path).not.toContain('<img src=x');
      // A bidi override reverses what follows it on screen: written raw or as a character reference,
      // the browser applies it; it must be shown as something visible, or dropped.
      expect(pageText(page.body), path).not.toContain('\u202e');
      expect(page.body, path).not.toMatch(/"\s*onmouseover=/);
      expect(pageText(page.body), path).toMatch(/&lt;script&gt;|<script>alert\(|Eve/);
    }
  });

  it('sets the session cookie HttpOnly and SameSite=Lax, without Secure or __Host- on http', async () => {
    const c = new ConsoleClient(h.url);
    const page = await followLink(c, await w.link(w.a.owner));
    const session = page.setCookies.find((l) => /session/i.test(l.split('=')[0] ?? ''));
    expect(session, page.setCookies.join('\n')).toBeDefined();
    expect(session).toMatch(/;\s*HttpOnly/i);
    expect(session).toMatch(/;\s*SameSite=Lax/i);
    expect(session).toMatch(/;\s*Path=\//i);
    // A Secure cookie is never sent back over http: sign-in would silently not stick.
    expect(session).not.toMatch(/;\s*Secure/i);
    expect(session).not.toMatch(/^__Host-/);
  });
});

describe.each(backends)('the console on an https public URL, on %s', (backend) => {
  let h: ConsoleApp;
  let w: World;
  beforeAll(async () => {
    h = await consoleApp(backend, { publicUrl: 'https://console.example.com' });
    w = await world(h);
  }, 60_000);
  afterAll(() => h?.close());

  it('names the session cookie __Host- and marks it Secure, with Path=/ and no Domain', async () => {
    const c = new ConsoleClient(h.url);
    expect((await askForLink(c, w.a.owner)).status).toBe(200);
    const link = consoleLink(await h.sink.waitFor(w.a.owner));
    // The mailed link is on the public URL; this test follows it to the server it stands for.
    expect(link.startsWith('https://console.example.com/console/')).toBe(true);
    const page = await followLink(c, link);
    const session = page.setCookies.find((l) => /session/i.test(l.split('=')[0] ?? ''));
    expect(session, page.setCookies.join('\n')).toMatch(/^__Host-/);
    expect(session).toMatch(/;\s*Secure/i);
    expect(session).toMatch(/;\s*HttpOnly/i);
    expect(session).toMatch(/;\s*SameSite=Lax/i);
    expect(session).toMatch(/;\s*Path=\/(;|$)/i);
    expect(session).not.toMatch(/;\s*Domain=/i);
  });
});

describe.each(backends)('sign-in limits, on %s', (backend) => {
  let h: ConsoleApp;
  let w: World;
  beforeEach(async () => {
    // X-Forwarded-For read as the client's address, so one test can play many addresses.
    h = await consoleApp(backend, { trustProxy: true });
    w = await world(h);
  }, 60_000);
  afterEach(() => h?.close());

  /** Asks for a link for `email` from `address`; the status answered. */
  async function ask(email: string, address: string): Promise<number> {
    const c = new ConsoleClient(h.url);
    c.headers = { 'x-forwarded-for': address };
    return (await askForLink(c, email)).status;
  }

  /** Mails to `emails` once the server has sent what it was going to (sent after the answer). */
  async function mailsTo(emails: string[], atLeast: number): Promise<number> {
    const count = () => emails.reduce((n, e) => n + h.sink.to(e).length, 0);
    await expect.poll(count, { timeout: 10_000 }).toBeGreaterThanOrEqual(atLeast);
    // Nothing more on its way: a refused request must not have queued a mail.
    await new Promise((r) => setTimeout(r, 300));
    return count();
  }

  it(`mails one email at most ${LINKS_PER_EMAIL} links in 15 minutes, asked from as many addresses`, async () => {
    expect(LINKS_PER_EMAIL).toBeLessThanOrEqual(20);
    const email = w.a.owner;
    for (let i = 1; i <= LINKS_PER_EMAIL; i++) expect(await ask(email, `203.0.113.${i}`)).toBe(200);
    expect(await ask(email, '203.0.113.200')).toBe(429);
    expect(await mailsTo([email], LINKS_PER_EMAIL)).toBe(LINKS_PER_EMAIL);
    h.clock.advance(15 * 60 + 1);
    expect(await ask(email, '203.0.113.201')).toBe(200);
    expect(await mailsTo([email], LINKS_PER_EMAIL + 1)).toBe(LINKS_PER_EMAIL + 1);
  });

  it(`mails at most ${LINKS_PER_ADDRESS} links in 15 minutes asked from one address, for as many emails`, async () => {
    expect(LINKS_PER_ADDRESS).toBeLessThanOrEqual(50);
    const emails: string[] = [];
    for (let i = 0; i <= LINKS_PER_ADDRESS; i++) {
      emails.push(`many-${i}-${backend}@example.com`);
      await addUser(h.services, w.a.accountId, emails[i]!, 'member');
    }
    for (const email of emails.slice(0, LINKS_PER_ADDRESS)) expect(await ask(email, '192.0.2.7')).toBe(200);
    // Known or not, the next one from that address is refused, and nothing is sent.
    expect(await ask(emails[LINKS_PER_ADDRESS]!, '192.0.2.7')).toBe(429);
    expect(await ask(`unknown-${backend}@example.com`, '192.0.2.7')).toBe(429);
    expect(await mailsTo(emails, LINKS_PER_ADDRESS)).toBe(LINKS_PER_ADDRESS);
    // Another address is not held back by it.
    expect(await ask(emails[LINKS_PER_ADDRESS]!, '192.0.2.8')).toBe(200);
    expect(await mailsTo(emails, LINKS_PER_ADDRESS + 1)).toBe(LINKS_PER_ADDRESS + 1);
  });
});
