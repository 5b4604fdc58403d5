/**
 * Every console page on a 375 px wide phone, in Chromium: the page is no wider than the screen
 * (document.documentElement.scrollWidth <= 375; wide tables scroll in their own box), axe-core finds
 * no serious or critical violation, and nothing the page loads answers 404 (its favicon included).
 * The pages are filled as a busy account's are: long names, keys, members, days and hours of usage,
 * a connected app; the consent page and the error pages too.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignedIn } from '../../src/console/identity.js';
import { addDays, dayOf, zeroCounts } from '../../src/domain/usage-history.js';
import { actingAs } from '../../src/service/audit.js';
import { authorizeUrl, consentFrom, Jar, REDIRECT, register } from '../oauth/flow.js';
import { type Live, liveServer, person } from '../oauth/harness.js';
import { type AxeViolation, browserAvailable, launch, seriousViolations, shoot } from './browser-helpers.js';

const WIDTH = 375;
const LONG_NAME = 'Acme International Consolidated Research & Development Laboratories Incorporated';
const admin = actingAs('admin:test');

describe.skipIf(!browserAvailable())('the console on a 375 px phone, in Chromium (SQLite)', () => {
  let live: Live;
  let browser: Browser;
  let accountId: string;
  let owner: SignedIn;
  let member: SignedIn;
  let memberUserId: string;
  let keyId: string;
  const violations: AxeViolation[] = [];
  const tooWide: string[] = [];
  const missing: string[] = [];

  beforeAll(async () => {
    live = await liveServer('sqlite');
    const { services, store } = live;
    const made = await services.accounts.create({ name: LONG_NAME, tokens: 123_456_789 }, admin);
    const second = await services.accounts.create({ name: 'Second Account', tokens: 10 }, admin);
    if (!made.ok || !second.ok) throw new Error('accounts');
    accountId = made.value.id;
    owner = await person(live, 'ann.very-long-address.for-testing@subdomain.example.com', [
      accountId,
      second.value.id,
    ]);
    const memberEmail = 'bob.member.with-a-long-address@subdomain.example.com';
    const bob = await services.users.add(accountId, memberEmail, 'member', admin);
    if (!bob.ok) throw new Error(bob.error.message);
    memberUserId = bob.value.id;
    member = {
      email: memberEmail,
      sessionId: 'ses_phone_member',
      memberships: [{ accountId, accountName: LONG_NAME, userId: memberUserId, role: 'member' }],
    };
    for (const name of ['production server in the eu-west datacentre', 'laptop']) {
      const key = await services.keys.create(accountId, name, admin);
      if (!key.ok) throw new Error(key.error.message);
      keyId = key.value.id;
      const res = await fetch(`${live.url}/api/v1/tools/get_account`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.value.key}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.status).toBe(200);
    }
    await usage(store, accountId);
    await connectAnApp();
    browser = await launch();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await live?.close();
  });

  /** Days of calls over 90 days and hours of today, as the servers' flushes write them. */
  async function usage(store: Live['store'], id: string): Promise<void> {
    const today = dayOf(Math.floor(Date.now() / 1000));
    const rows = Array.from({ length: 90 }, (_, n) => ({
      accountId: id,
      day: addDays(today, -n),
      keyId,
      tool: 'get_account',
      surface: 'http' as const,
      ...zeroCounts(),
      calls: 1_000 + n * 37,
      tokens: 123_456,
      records: 98_765,
      withData: 900,
      withoutData: 100 + n * 37,
    }));
    const hours = Array.from({ length: 24 }, (_, hour) => ({
      accountId: id,
      day: today,
      hour,
      calls: 100 + hour,
      tokens: 12_345,
      failed: hour % 3,
    }));
    await store.usageHistory.add(rows, hours);
  }

  /** A connector allowed by the owner: Connected apps has a row. */
  async function connectAnApp(): Promise<void> {
    const client = await register(live, { client_name: 'A connector with a rather long name, for phones' });
    const jar = new Jar();
    jar.add(live.identity.signIn(owner));
    const { url } = authorizeUrl(live, String(client.body.client_id));
    await consentFrom(live, jar, url, accountId, REDIRECT);
  }

  async function phone(who: SignedIn | null): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport: { width: WIDTH, height: 800 } });
    if (who) {
      const [name, value] = live.identity.signIn(who).split('=') as [string, string];
      await context.addCookies([{ name, value, url: live.url }]);
    }
    return context;
  }

  /** Judges the page now shown: its width, axe-core, a screenshot. */
  async function judge(page: Page, name: string): Promise<void> {
    const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);
    if (width > WIDTH) tooWide.push(`${name}: ${width} px`);
    violations.push(...(await seriousViolations(page, name)));
    await shoot(page, `phone-${name}`);
  }

  /** Opens `path`, expecting `status`; every other answer the page loads must be found. */
  async function visit(context: BrowserContext, path: string, name: string, status = 200): Promise<Page> {
    const page = await context.newPage();
    page.on('response', (r) => {
      if (r.status() === 404 && r.request().resourceType() !== 'document')
        missing.push(`${name}: ${r.url()}`);
    });
    const res = await page.goto(`${live.url}${path}`);
    expect(res?.status(), name).toBe(status);
    // The icon every page names is served (headless Chromium may not ask for it by itself).
    const icon = await page.locator('link[rel=icon]').getAttribute('href');
    expect(icon, `${name}: a favicon`).toBeTruthy();
    const got = await page.request.get(new URL(icon!, page.url()).href);
    expect(got.status(), `${name}: ${icon}`).toBe(200);
    await judge(page, name);
    return page;
  }

  it('fits every page in 375 px, with no serious axe-core violation and nothing missing', async () => {
    const today = dayOf(Math.floor(Date.now() / 1000));
    const ctx = await phone(owner);
    const base = `/console/a/${accountId}`;
    await visit(ctx, '/console/', 'chooser');
    await visit(ctx, `${base}/`, 'overview');
    await visit(ctx, `${base}/usage`, 'usage');
    await visit(ctx, `${base}/usage?period=90&day=${addDays(today, -1)}`, 'usage-90-days');
    const keys = await visit(ctx, `${base}/keys`, 'api-keys');
    await keys.getByLabel('Name', { exact: true }).fill('a key made on a phone, with a long name');
    await keys.getByRole('button', { name: 'Create key' }).click();
    await keys.getByRole('heading', { name: 'Your new key' }).waitFor();
    await judge(keys, 'api-key-created');
    await visit(ctx, `${base}/keys/${keyId}/revoke`, 'api-key-revoke');
    await visit(ctx, `${base}/billing`, 'billing');
    await visit(ctx, `${base}/members`, 'members');
    await visit(ctx, `${base}/members/${memberUserId}/remove`, 'member-remove');
    await visit(ctx, `${base}/connect`, 'connect');
    await visit(ctx, `${base}/connected-apps`, 'connected-apps');
    await visit(ctx, '/console/a/acc_nobody/', 'not-found', 404);
    await consentPage(ctx);
    await ctx.close();

    const memberCtx = await phone(member);
    await visit(memberCtx, `${base}/members`, 'for-owners', 403);
    await memberCtx.close();

    const anonymous = await phone(null);
    const signIn = await visit(anonymous, '/console/sign-in', 'sign-in');
    await signIn.getByLabel('Email').fill('someone@example.com');
    await signIn.getByRole('button', { name: /email me a link/i }).click();
    await signIn.getByRole('heading', { name: /check your email/i }).waitFor();
    await judge(signIn, 'check-email');
    await anonymous.close();

    expect(tooWide, 'pages wider than the screen').toEqual([]);
    expect(missing, 'answers 404 a page loaded').toEqual([]);
    expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);
  }, 180_000);

  /** The OAuth consent page, as a connector's authorization brings the person to it. */
  async function consentPage(ctx: BrowserContext): Promise<void> {
    const client = await register(live, { client_name: 'Another connector asking from a phone' });
    const page = await ctx.newPage();
    await page.goto(authorizeUrl(live, String(client.body.client_id)).url);
    expect(new URL(page.url()).pathname).toMatch(/^\/console\/consent\//);
    expect(await page.getByRole('button', { name: 'Allow' }).count()).toBe(1);
    await judge(page, 'consent');
  }
});
