/**
 * The console over HTTP, against a live app on a scratch SQLite file: sign-in through the link the
 * log carries, the pages with the API's numbers, keys created and revoked, the roles' rules,
 * another account's ids answered 404, CSRF, sign-out, and hostile strings escaped.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { unknownVariableWarnings } from '../../src/config-warnings.js';
import { formatDay, formatHour } from '../../src/console/format.js';
import { FixedClock } from '../../src/domain/clock.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { addDays, dayOf, zeroCounts } from '../../src/domain/usage-history.js';
import { actingAs } from '../../src/service/audit.js';
import { createServices, type Services } from '../../src/service/index.js';
import { UsageCounters } from '../../src/service/usage-counters.js';
import { withReadCache } from '../../src/store/cached-reads.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/store.js';
import { callTool, send } from '../calls.js';
import { runCli } from '../cli/run-cli.js';
import { ADMIN_TOKEN, captureLogs, KEY_SECRET, scratchServices, T0 } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable, scratchSchemaName } from '../postgres.js';
import { decodeEntities } from './smtp-sink-helpers.js';

interface Page {
  status: number;
  body: string;
  location: string | null;
  headers: Headers;
}

/** A browser in miniature: a cookie jar, forms posted as forms, redirects not followed. */
class Browser {
  jar = new Map<string, string>();
  constructor(private readonly base: string) {}

  async request(method: string, path: string, form?: Record<string, string>): Promise<Page> {
    const headers: Record<string, string> = {};
    if (this.jar.size > 0) headers.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(new URL(path, this.base), {
      method,
      headers,
      redirect: 'manual',
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const [name, value] = pair!.split('=') as [string, string];
      if (attributes.some((a) => /max-age=0/i.test(a)) || value === '') this.jar.delete(name.trim());
      else this.jar.set(name.trim(), value);
    }
    return {
      status: res.status,
      body: await res.text(),
      location: res.headers.get('location'),
      headers: res.headers,
    };
  }

  get(path: string) {
    return this.request('GET', path);
  }

  /** Posts a form of `page` (the first whose action is `action`), its hidden fields included. */
  async submit(page: Page, action: string, fields: Record<string, string> = {}): Promise<Page> {
    return this.request('POST', action, { _csrf: csrfOf(page), ...fields });
  }

  /**
   * Follows a sign-in link as a person does: its page (which spends nothing), then its "Sign in"
   * button. A link refused on its page (its shape) answers that page.
   */
  async follow(link: string): Promise<Page> {
    const landing = await this.get(link);
    const token = /name="token" value="([^"]+)"/.exec(landing.body)?.[1];
    if (landing.status !== 200 || token === undefined) return landing;
    return this.submit(landing, '/console/auth', { token });
  }
}

const csrfOf = (page: Page) => /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';

/** What the tests need of a backend: the services on it, and how the CLI reaches its database. */
interface Backend {
  services: Services;
  store: Store;
  clock: FixedClock;
  databaseEnv: Record<string, string>;
  close(): Promise<void>;
}

async function sqliteBackend(): Promise<Backend> {
  const h = await scratchServices();
  return { ...h, databaseEnv: { TOOLGATE_DATABASE_URL: `sqlite:${h.dbPath}` } };
}

async function postgresBackend(): Promise<Backend> {
  const schema = scratchSchemaName();
  const { store, reads } = withReadCache(
    (observer) => new PostgresStore({ url: POSTGRES_URL, schema, observer }),
  );
  const clock = new FixedClock(T0);
  await store.migrate(DEFAULT_PLANS, Math.floor(T0 / 1000));
  const usageCounters = new UsageCounters(store.usageHistory, clock);
  const services = createServices({
    store,
    reads,
    clock,
    keyPrefix: 'tg',
    keySecret: KEY_SECRET,
    usageCounters,
  });
  return {
    services,
    store,
    clock,
    databaseEnv: {
      TOOLGATE_DATABASE_URL: POSTGRES_URL,
      TOOLGATE_DATABASE_SCHEMA: schema,
      TOOLGATE_KEY_SECRET: KEY_SECRET,
    },
    async close() {
      await usageCounters.stop().catch(() => {});
      await store.dropSchema().catch(() => {});
      await store.close();
    },
  };
}

const pgAvailable = await postgresAvailable();
const backends = [
  ['SQLite', sqliteBackend],
  ...(pgAvailable ? [['PostgreSQL', postgresBackend] as const] : []),
] as const;

describe.each(backends)('the console over HTTP, on %s', (_name, openBackend) => {
  let h: Backend;
  let app: FastifyInstance;
  let url: string;
  let logs: ReturnType<typeof captureLogs>;
  let accountId: string;
  let otherId: string;
  let ownerKey: string;

  beforeEach(async () => {
    h = await openBackend();
    logs = captureLogs('info');
    url = '';
    app = await buildApp({
      services: h.services,
      adminToken: ADMIN_TOKEN,
      logger: logs.logger,
      console: { publicUrl: () => url },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const admin = actingAs('admin:test');
    const account = await h.services.accounts.create({ name: 'Acme <b>Tools</b>', tokens: 1234 }, admin);
    const other = await h.services.accounts.create({ name: 'Other Co' }, admin);
    if (!account.ok || !other.ok) throw new Error('no accounts');
    accountId = account.value.id;
    otherId = other.value.id;
    await h.services.users.add(accountId, 'owner@example.com', 'owner', admin);
    await h.services.users.add(accountId, 'member@example.com', 'member', admin);
    await h.services.users.add(otherId, 'eve@example.com', 'owner', admin);
    const key = await h.services.keys.create(accountId, 'server', admin);
    if (!key.ok) throw new Error('no key');
    ownerKey = key.value.key;
  });
  afterEach(async () => {
    await app.close();
    await h.close();
  });

  /** The link the log carries for `email` (no SMTP, not production), the `nth` one. */
  async function loggedLink(email: string, nth = 1): Promise<string> {
    for (let i = 0; i < 200; i++) {
      const links = logs.lines.filter((l) => l.to === email && typeof l.url === 'string');
      if (links.length >= nth) return links[nth - 1]!.url as string;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no link logged for ${email}`);
  }

  async function signIn(email: string, nth = 1): Promise<Browser> {
    const b = new Browser(url);
    const form = await b.get('/console/sign-in');
    expect(form.status).toBe(200);
    const asked = await b.submit(form, '/console/sign-in', { email });
    expect(asked.status).toBe(200);
    const landed = await b.follow(await loggedLink(email, nth));
    expect(landed.status).toBe(303);
    return b;
  }

  const tool = async (key: string, name: string, body: unknown = {}) => {
    const res = await callTool(url, key, name, body);
    return { status: res.status, body: res.data };
  };

  it('signs in through the logged link, once, and lands on the Overview with get_account’s numbers', async () => {
    const b = new Browser(url);
    const asked = await b.submit(await b.get('/console/sign-in'), '/console/sign-in', {
      email: 'Owner@Example.com',
    });
    expect(asked.body).toMatch(/check your email/i);
    const link = await loggedLink('owner@example.com');
    expect(link.startsWith(`${url}/console/auth?token=`)).toBe(true);
    const landed = await b.follow(link);
    expect(landed.location).toBe(`/console/a/${accountId}/`);
    const session = landed.headers.getSetCookie().find((c) => c.startsWith('toolgate_session='));
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
    expect(session).toMatch(/Path=\//);
    // The link is spent: a second use signs nobody in.
    const replay = await new Browser(url).follow(link);
    expect(replay.status).toBe(400);
    expect(replay.headers.getSetCookie().some((c) => c.includes('session'))).toBe(false);

    const overview = await b.get(landed.location!);
    expect(overview.status).toBe(200);
    expect(overview.headers.get('content-security-policy')).toContain("default-src 'self'");
    const account = await tool(ownerKey, 'get_account');
    expect(overview.body).toContain('<h1>Overview</h1>');
    expect(overview.body).toContain(account.body.results.token_balance.toLocaleString('en-US'));
    expect(overview.body).toContain(`<dd>${account.body.results.plan}</dd>`);
    const windows = Object.values(account.body.results.fair_use as Record<string, Record<string, object>>)
      .flatMap((units) => Object.values(units))
      .flatMap((w) => Object.keys(w)).length;
    expect(overview.body.match(/<progress /g)).toHaveLength(windows);
    // A hostile account name is text, not markup.
    expect(overview.body).toContain('Acme &lt;b&gt;Tools&lt;/b&gt;');
    expect(overview.body).not.toContain('<b>Tools</b>');
    // A bidi override in a name is shown, not obeyed: it would reverse the rest of the line.
    await h.services.accounts.update(accountId, { name: 'Acme \u202egnp.exe' }, actingAs('admin:test'));
    const renamed = await b.get(landed.location!);
    expect(renamed.body).not.toContain('\u202e');
    expect(renamed.body).toContain('Acme \ufffdgnp.exe');
  });

  it('brings a person sent to sign in back to where they were, and only to a path here', async () => {
    const b = new Browser(url);
    const form = await b.get('/console/sign-in?return_to=%2Foauth%2Fauthorize%3Fclient_id%3Dx');
    expect(form.body).toContain('name="return_to" value="/oauth/authorize?client_id=x"');
    await b.submit(form, '/console/sign-in', {
      email: 'owner@example.com',
      return_to: '/oauth/authorize?client_id=x',
    });
    expect((await b.follow(await loggedLink('owner@example.com'))).location).toBe(
      '/oauth/authorize?client_id=x',
    );
    // Signed in already: straight back.
    expect((await b.get('/console/sign-in?return_to=%2Fconsole%2Fa%2F')).location).toBe('/console/a/');
    const offsite = await b.get('/console/sign-in?return_to=%2F%2Fevil.example%2F');
    expect(offsite.status).toBe(200);
    expect(offsite.body).not.toContain('evil.example');
  });

  it('answers the sign-in form the same for a known and an unknown email', async () => {
    const b = new Browser(url);
    const form = await b.get('/console/sign-in');
    const known = await b.submit(form, '/console/sign-in', { email: 'owner@example.com' });
    const unknown = await b.submit(form, '/console/sign-in', { email: 'nobody@example.com' });
    expect(unknown.status).toBe(known.status);
    expect(unknown.body).toBe(known.body);
    await loggedLink('owner@example.com');
    expect(logs.lines.some((l) => l.to === 'nobody@example.com')).toBe(false);
    const hostile = await b.submit(form, '/console/sign-in', {
      email: 'owner@example.com\nBcc: eve@example.com',
    });
    expect(hostile.status).toBe(400);
    expect(hostile.body).not.toContain('Bcc');
  });

  it('shows the Usage page with get_usage’s numbers, by tool and by key, and the CSV', async () => {
    const b = await signIn('owner@example.com');
    // A new account: what will show here, not rows of zeros.
    const empty = await b.get(`/console/a/${accountId}/usage`);
    expect(empty.status).toBe(200);
    expect(empty.body).toContain('No calls in the last 30 days');
    expect(empty.body).not.toContain('<table');
    expect(empty.body).not.toContain('<svg');

    for (let i = 0; i < 3; i++) expect((await tool(ownerKey, 'get_account')).status).toBe(200);
    const usage = await tool(ownerKey, 'get_usage', { period: 'month' });
    const page = await b.get(`/console/a/${accountId}/usage`);
    expect(page.status).toBe(200);
    const today = dayOf(Math.floor(h.clock.now() / 1000));
    // get_usage's own call is counted too.
    const calls = usage.body.results.totals.calls + 1;
    const todayRow = new RegExp(
      `<th scope="row"><time datetime="${today}">${formatDay(today, true)}</time>.*?</th><td>${calls}</td>`,
    );
    expect(page.body).toMatch(todayRow);
    // Only the days with calls are rows; plain labels.
    expect(page.body.match(/<time datetime="\d{4}-\d\d-\d\d">/g)).toHaveLength(1);
    expect(page.body).toContain('Answered with results');
    expect(page.body).not.toMatch(/With data/i);
    expect(page.body).toMatch(/<tr><th scope="row">get_account<\/th><td>3<\/td>/);
    expect(page.body).toContain('server (tg_…');
    expect(page.body).toContain('<svg');
    // Today by the hour: the calls of this hour.
    const hour = new Date(h.clock.now()).getUTCHours();
    expect(page.body).toContain(`<tr><th scope="row">${formatHour(hour)}</th><td>${calls}</td>`);
    const csvHref = /href="([^"]+\.csv[^"]*)"[^>]*>Download CSV</.exec(page.body)?.[1];
    const csv = await b.get(decodeEntities(csvHref!));
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.body.split('\r\n').filter((l) => l.startsWith(`${today},${calls},`))).toHaveLength(1);
    expect(csv.body.split('\r\n')).toHaveLength(32);
  });

  it('chooses the period (7, 30, 90 days, this billing period) and a day of the last seven by the hour', async () => {
    const today = dayOf(Math.floor(h.clock.now() / 1000));
    const twoDaysAgo = addDays(today, -2);
    // Usage of 2 and 40 days ago, as the servers' flushes write it.
    await h.store.usageHistory.add(
      [2, 40].map((n) => ({
        accountId,
        day: addDays(today, -n),
        keyId: 'key_x',
        tool: 'get_account',
        surface: 'http' as const,
        ...zeroCounts(),
        calls: n,
      })),
      [{ accountId, day: twoDaysAgo, hour: 7, calls: 2, tokens: 0, failed: 1 }],
    );
    const b = await signIn('owner@example.com');
    const calls = async (query: string) => {
      const page = await b.get(`/console/a/${accountId}/usage${query}`);
      expect(page.status, query).toBe(200);
      return (
        /<strong>([\d,]+) calls<\/strong>/.exec(page.body)?.[1] ??
        (page.body.includes('No calls') ? '0' : '?')
      );
    };
    expect(await calls('')).toBe('2');
    expect(await calls('?period=7')).toBe('2');
    expect(await calls('?period=90')).toBe('42');
    // A plan without a billing period is not offered one: the default instead.
    const page = await b.get(`/console/a/${accountId}/usage?period=90`);
    expect(page.body).not.toContain('This billing period');
    expect(page.body).toMatch(/href="[^"]*period=90"[^>]*aria-current="page">90 days</);
    expect(await calls('?period=billing')).toBe('2');
    expect(await calls('?period=nonsense')).toBe('2');
    await h.services.accounts.update(accountId, { plan: 'subscription_27' }, actingAs('admin:test'));
    const billed = await b.get(`/console/a/${accountId}/usage?period=billing`);
    expect(billed.body).toMatch(/aria-current="page">This billing period</);
    expect(billed.body).toContain('No calls in this billing period');
    // Two days ago by the hour, from its link on the day's row.
    const link = new RegExp(`href="([^"]*day=${twoDaysAgo}[^"]*)"`).exec(page.body)?.[1];
    expect(link, 'a "by hour" link on the day').toBeDefined();
    const hours = await b.get(decodeEntities(link!));
    expect(hours.body).toContain(`By hour: ${formatDay(twoDaysAgo, true)} (UTC)`);
    expect(hours.body).toContain(`<tr><th scope="row">${formatHour(7)}</th><td>2</td><td>1</td>`);
    // 40 days ago is no longer kept by the hour: no link, and a hand-made one shows today.
    expect(page.body).not.toContain(`day=${addDays(today, -40)}`);
    const old = await b.get(`/console/a/${accountId}/usage?day=${addDays(today, -40)}`);
    expect(old.body).toContain(`By hour: ${formatDay(today, true)} (UTC)`);
  });

  it('creates a key shown once, and revokes it after a confirmation; both audited as the user', async () => {
    const b = await signIn('owner@example.com');
    const keys = await b.get(`/console/a/${accountId}/keys`);
    expect(keys.body).toContain('Create key');
    const created = await b.submit(keys, `/console/a/${accountId}/keys`, { name: 'laptop' });
    expect(created.status).toBe(201);
    const key = /<code id="new-key">([^<]+)<\/code>/.exec(created.body)?.[1];
    expect(key).toMatch(/^tg_[0-9A-Za-z]{11}$/);
    expect(created.headers.get('cache-control')).toBe('no-store');
    // A ready curl line with the new key, which a terminal runs as it is.
    const curl = decodeEntities(
      /<pre id="new-key-curl"><code>([^<]+)<\/code><\/pre>/.exec(created.body)?.[1] ?? '',
    );
    expect(curl).toContain(`Authorization: Bearer ${key}`);
    expect(curl).toContain(`${url}/api/v1/tools/get_account`);
    const ran = await promisify(execFile)('sh', ['-c', curl]);
    expect(JSON.parse(ran.stdout).results.id).toBe(accountId);
    expect((await tool(key!, 'get_account')).status).toBe(200);
    const listed = await b.get(`/console/a/${accountId}/keys`);
    expect(listed.body).not.toContain(key!);
    const keyId = /\/keys\/(key_[0-9a-z]+)\/revoke/.exec(
      listed.body.slice(listed.body.indexOf('laptop')),
    )?.[1];
    const confirm = await b.get(`/console/a/${accountId}/keys/${keyId}/revoke`);
    expect(confirm.body).toMatch(/<h1>Revoke key laptop\?<\/h1>/);
    const revoked = await b.submit(confirm, `/console/a/${accountId}/keys/${keyId}/revoke`);
    expect(revoked.status).toBe(303);
    expect((await tool(key!, 'get_account')).status).toBe(401);
    const audit = await h.store.audit.list({ limit: 100, accountId });
    expect(audit.filter((e) => e.actor === 'user:owner@example.com').map((e) => e.action)).toEqual([
      'key.create',
      'key.revoke',
    ]);
  });

  it('lets a member read but not create, revoke, or manage members', async () => {
    const b = await signIn('member@example.com');
    const keys = await b.get(`/console/a/${accountId}/keys`);
    expect(keys.status).toBe(200);
    expect(keys.body).not.toContain('Create key');
    expect(keys.body).not.toContain('>Revoke<');
    expect(keys.body).not.toContain('>Members<');
    const created = await b.submit(keys, `/console/a/${accountId}/keys`, { name: 'sneaky' });
    // A member of the account is told the page is for its owners (another account's stays 404).
    expect(created.status).toBe(403);
    const members = await b.get(`/console/a/${accountId}/members`);
    expect(members.status).toBe(403);
    expect(members.body).toContain('This page is for the owners of Acme &lt;b&gt;Tools&lt;/b&gt;');
    expect(members.body).toContain('<h1>For owners only</h1>');
    // In the account's layout: the member's own pages still at hand.
    expect(members.body).toContain(`href="/console/a/${accountId}/usage"`);
    const listed = await h.services.keys.list(accountId);
    expect(listed.ok && listed.value.map((k) => k.name)).toEqual(['server']);
  });

  it("answers 404 for another account's ids, in URLs and forms", async () => {
    const b = await signIn('owner@example.com');
    const otherKey = await h.services.keys.create(otherId, 'theirs');
    const eve = await h.services.users.list(otherId);
    if (!otherKey.ok || !eve.ok) throw new Error('setup');
    const eveId = eve.value[0]!.id;
    const page = await b.get(`/console/a/${accountId}/keys`);
    for (const path of ['/', 'usage', 'usage.csv', 'keys', 'billing', 'members', 'connect', 'connected-apps'])
      expect((await b.get(`/console/a/${otherId}/${path}`)).status, path).toBe(404);
    expect((await b.get(`/console/a/${accountId}/keys/${otherKey.value.id}/revoke`)).status).toBe(404);
    expect((await b.submit(page, `/console/a/${accountId}/keys/${otherKey.value.id}/revoke`)).status).toBe(
      404,
    );
    expect((await b.submit(page, `/console/a/${otherId}/keys`, { name: 'x' })).status).toBe(404);
    expect(
      (await b.submit(page, `/console/a/${accountId}/members/${eveId}/role`, { role: 'member' })).status,
    ).toBe(404);
    expect((await b.submit(page, `/console/a/${accountId}/members/${eveId}/remove`)).status).toBe(404);
    expect((await tool(otherKey.value.key, 'get_account')).status).toBe(200);
    expect((await h.store.users.get(eveId))?.role).toBe('owner');
  });

  it('refuses a POST without its CSRF token, or with a forged one (403), and changes nothing', async () => {
    const b = await signIn('owner@example.com');
    const bare = await b.request('POST', `/console/a/${accountId}/keys`, { name: 'x' });
    expect(bare.status).toBe(403);
    const forged = await b.request('POST', `/console/a/${accountId}/keys`, { name: 'x', _csrf: 'forged' });
    expect(forged.status).toBe(403);
    const signOut = await b.request('POST', '/console/sign-out', {});
    expect(signOut.status).toBe(403);
    const listed = await h.services.keys.list(accountId);
    expect(listed.ok && listed.value).toHaveLength(1);
  });

  it('invites a member who signs in, changes roles, keeps an owner, and removal ends their session', async () => {
    const b = await signIn('owner@example.com');
    const members = await b.get(`/console/a/${accountId}/members`);
    const invited = await b.submit(members, `/console/a/${accountId}/members`, {
      email: 'new@example.com',
      role: 'member',
    });
    expect(invited.status).toBe(303);
    const n = new Browser(url);
    expect((await n.follow(await loggedLink('new@example.com'))).location).toBe(`/console/a/${accountId}/`);
    expect((await n.get(`/console/a/${accountId}/`)).status).toBe(200);
    const users = await h.services.users.list(accountId);
    const newId = users.ok ? users.value.find((u) => u.email === 'new@example.com')!.id : '';
    const ownerId = users.ok ? users.value.find((u) => u.email === 'owner@example.com')!.id : '';
    const page = await b.get(`/console/a/${accountId}/members`);
    // The only owner is offered neither a role change nor removal; a forged one says why.
    expect(page.body).not.toContain(`/members/${ownerId}/role`);
    expect(page.body).not.toContain(`/members/${ownerId}/remove`);
    expect(page.body).toContain(`/members/${newId}/remove`);
    const demote = await b.submit(page, `/console/a/${accountId}/members/${ownerId}/role`, {
      role: 'member',
    });
    expect(demote.status).toBe(409);
    expect(demote.body).toContain('An account keeps at least one owner.');
    expect(demote.body).not.toContain('Error 409');
    const removeOwner = await b.get(`/console/a/${accountId}/members/${ownerId}/remove`);
    expect(removeOwner.status).toBe(409);
    expect(removeOwner.body).toContain('an account keeps at least one owner');
    const promote = await b.submit(page, `/console/a/${accountId}/members/${newId}/role`, { role: 'owner' });
    expect(promote.status).toBe(303);
    expect((await h.store.users.get(newId))?.role).toBe('owner');
    const removed = await b.submit(page, `/console/a/${accountId}/members/${newId}/remove`);
    expect(removed.status).toBe(303);
    expect((await n.get(`/console/a/${accountId}/`)).status).toBe(303);
    const audit = await h.store.audit.list({ limit: 100, accountId });
    expect(audit.filter((e) => e.actor === 'user:owner@example.com').map((e) => e.action)).toEqual([
      'user.add',
      'user.role',
      'user.remove',
    ]);
  });

  it('renders Billing, Connect and Connected apps, and signs out', async () => {
    const b = await signIn('owner@example.com');
    const billing = await b.get(`/console/a/${accountId}/billing`);
    expect(billing.body).toContain('<h1>Billing</h1>');
    expect(billing.body).toContain('<th scope="row">get_account</th>');
    const connect = await b.get(`/console/a/${accountId}/connect`);
    expect(connect.body).toContain(`${url}/mcp`);
    // For customers: every tool once, with its input schema and an example call; no probes, no admin API.
    for (const name of ['get_account', 'get_billing', 'get_usage'])
      expect(
        connect.body.match(new RegExp(`<h3 id="tool-\\d+"><code>${name}</code></h3>`, 'g')),
        name,
      ).toHaveLength(1);
    expect(connect.body.match(/<summary>Input schema<\/summary>/g)).toHaveLength(3);
    expect(decodeEntities(connect.body)).toContain(`${url}/api/v1/tools/get_usage \\`);
    expect(decodeEntities(connect.body)).toContain(`-d '{"period":"today"}'`);
    expect(connect.body).not.toContain('/admin/v1');
    expect(connect.body).not.toMatch(/healthz|readyz/);
    for (const client of ['Claude Code', 'Claude Desktop', 'claude.ai', 'ChatGPT', 'Cursor', 'VS Code'])
      expect(connect.body).toContain(`<h3>${client}</h3>`);
    const apps = await b.get(`/console/a/${accountId}/connected-apps`);
    expect(apps.body).toContain('No connected apps.');
    const css = await b.get('/console/assets/console.css');
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect((await b.get('/console/assets/..%2fservice.ts')).status).toBe(404);
    const out = await b.submit(apps, '/console/sign-out');
    expect(out.status).toBe(303);
    expect((await b.get(`/console/a/${accountId}/`)).location).toMatch(/^\/console\/sign-in/);
  });

  it('makes operator links through the admin API and both CLI modes, audited, for users only', async () => {
    const admin = (body: unknown, token = ADMIN_TOKEN) =>
      send(url, token, 'POST', '/admin/v1/console/links', body);
    const made = await admin({ email: 'owner@example.com', account_id: accountId });
    expect(made.status).toBe(201);
    const { url: link } = made.data as { url: string };
    expect((await new Browser(url).follow(link)).location).toBe(`/console/a/${accountId}/`);
    expect((await admin({ email: 'owner@example.com', account_id: otherId })).status).toBe(404);
    expect((await admin({ email: 'nobody@example.com' })).status).toBe(404);
    expect((await admin({ email: 'owner@example.com' }, 'wrong-token-0123456789')).status).toBe(401);
    // A header smuggled into the address is no address: no link, no mail.
    expect((await admin({ email: 'owner@example.com\r\nBcc: eve@example.com' })).status).toBe(400);
    expect((await admin({ email: 'owner@example.com', extra: 1 })).status).toBe(400);

    const env = {
      PATH: process.env.PATH,
      ...h.databaseEnv,
      TOOLGATE_PUBLIC_URL: url,
      TOOLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    };
    for (const mode of [[], ['--url', url]]) {
      const r = await runCli(env, ['console', 'link', 'member@example.com', '--json', ...mode]);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      const printed = JSON.parse(r.stdout) as { url: string };
      expect(Object.keys(printed)).toEqual(['url']);
      const b = new Browser(url);
      expect((await b.follow(printed.url)).location).toBe(`/console/a/${accountId}/`);
      expect((await b.get(`/console/a/${accountId}/keys`)).status).toBe(200);
    }
    const refused = await runCli(env, ['console', 'link', 'nobody@example.com', '--account', accountId]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr + refused.stdout).toContain('No user nobody@example.com');
    const audit = await h.store.audit.list({ limit: 100 });
    const links = audit.filter((e) => e.action === 'console.link');
    expect(links.map((e) => e.actor)).toEqual(['admin:admin', expect.stringMatching(/^cli/), 'admin:admin']);
    expect(JSON.stringify(links)).not.toContain('token=');
  }, 60_000);

  it('sends people at / to the console, and keeps the API’s own answers', async () => {
    const root = await fetch(`${url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/console/');
    const api = await fetch(`${url}/api/v1/tools/get_account`, { method: 'POST' });
    expect(api.headers.get('content-security-policy')).toBeNull();
    expect(api.status).toBe(401);
  });
});

describe('the console’s configuration', () => {
  it('reads the console variables, with their defaults', () => {
    const defaults = loadConfig({});
    expect(defaults.console).toEqual({
      enabled: true,
      signup: 'closed',
      signupPlan: 'free',
      smtpUrl: undefined,
      smtpFrom: undefined,
    });
    expect(defaults.publicUrl).toBeUndefined();
    const set = loadConfig({
      TOOLGATE_CONSOLE: 'off',
      TOOLGATE_CONSOLE_SIGNUP: 'open',
      TOOLGATE_CONSOLE_SIGNUP_PLAN: 'starter',
      TOOLGATE_PUBLIC_URL: 'https://tools.example.com/',
      TOOLGATE_SMTP_URL: 'smtps://mailer:pw@smtp.example.com:465',
      TOOLGATE_SMTP_FROM: 'toolgate <no-reply@example.com>',
    });
    expect(set.publicUrl).toBe('https://tools.example.com');
    expect(set.console).toMatchObject({ enabled: false, signup: 'open', signupPlan: 'starter' });
    expect(unknownVariableWarnings({ TOOLGATE_SMTP_URL: 'x', TOOLGATE_PUBLIC_URL: 'x' })).toEqual([]);
    expect(unknownVariableWarnings({ TOOLGATE_CONSOLE_SIGNUPS: 'open' })).toEqual([
      'TOOLGATE_CONSOLE_SIGNUPS is not a variable toolgate reads (ignored): did you mean TOOLGATE_CONSOLE_SIGNUP?',
    ]);
  });

  it('names each bad console variable, and keeps an SMTP password out of the message', () => {
    let message = '';
    try {
      loadConfig({
        TOOLGATE_CONSOLE: 'maybe',
        TOOLGATE_PUBLIC_URL: 'https://user@evil.example/',
        TOOLGATE_SMTP_URL: 'http://mailer:hunter2@smtp.example.com',
      });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      message = (err as Error).message;
    }
    expect(message).toContain('TOOLGATE_CONSOLE must be on');
    expect(message).toContain('TOOLGATE_PUBLIC_URL must be the address');
    expect(message).toContain('TOOLGATE_SMTP_URL must be smtp://');
    expect(message).not.toContain('hunter2');
  });
});
