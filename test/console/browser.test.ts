/**
 * The console in a real browser (Debian's chromium through playwright-core) against a real server
 * process, with a real SMTP sink receiving the sign-in links: a customer signs in by the emailed
 * link (by keyboard alone), reads the Overview (the numbers get_account gives), creates a key (by
 * keyboard alone) that then answers get_account over HTTP, revokes it (401 after), sees the calls on
 * Usage (the numbers get_usage and the usage report give), invites a member who signs in as a member
 * and cannot create keys, and signs out. Every page is screenshot and passes axe-core with no serious
 * or critical violation.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDay, formatTime } from '../../src/console/format.js';
import { ROOT } from '../e2e/process.js';
import { postgresAvailable } from '../postgres.js';
import {
  type AxeViolation,
  browserAvailable,
  launch,
  mainText,
  navigating,
  seriousViolations,
  shoot,
  tabTo,
} from './browser-helpers.js';
import {
  accountWithOwner,
  adminCall,
  adminKey,
  type Backend,
  type ConsoleServer,
  callTool,
  consume,
  startConsoleServer,
  usageHistory,
} from './console-server-helpers.js';
import { consoleLink, type SmtpSink, startSmtpSink } from './smtp-sink-helpers.js';

const browserOk = browserAvailable();
const backends: Backend[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];
const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
/** A number as a page may print it: 1234 or 1,234. */
const num = (n: number) => `(?:${n}|${n.toLocaleString('en-US')})`;

describe.skipIf(!browserOk).each(backends)('the console in chromium, on %s', (backend) => {
  let sink: SmtpSink;
  let server: ConsoleServer;
  let browser: Browser;
  const violations: AxeViolation[] = [];
  const shots = new Map<string, string>();
  const OWNER = `owner-${backend}@example.com`;
  const MEMBER = `member-${backend}@example.com`;
  let accountId: string;
  let adminMade: { id: string; key: string };

  beforeAll(async () => {
    sink = await startSmtpSink();
    server = await startConsoleServer(backend, sink.url);
    browser = await launch();
    ({ accountId } = await accountWithOwner(server.url, {
      name: 'Acme Browsers',
      email: OWNER,
      tokens: 500,
    }));
    adminMade = await adminKey(server.url, accountId, 'from the operator');
    // Something on every window of the enrich category, so the Overview's bars are not all zero.
    await consume(server.url, accountId, { category: 'enrich', records: 7 });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await sink?.close();
  });

  /** Screenshot and axe-core for the page as it is now, under `name`; and no wider than a phone. */
  async function judge(page: Page, name: string): Promise<void> {
    shots.set(name, await shoot(page, `${backend}-${name}`));
    violations.push(...(await seriousViolations(page, name)));
    const size = page.viewportSize();
    await page.setViewportSize({ width: 375, height: 800 });
    const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);
    expect(width, `${name} at 375 px`).toBeLessThanOrEqual(375);
    if (size) await page.setViewportSize(size);
  }

  /** Signs `email` in from the sign-in page by keyboard alone, through the `nth` link mailed to it; the link. */
  async function signInByKeyboard(
    page: Page,
    email: string,
    nth: number,
    landing = 'Overview',
  ): Promise<string> {
    await page.goto(`${server.url}/console/sign-in`);
    await judge(page, 'sign-in');
    await tabTo(page, page.getByLabel(/email/i).first());
    await page.keyboard.type(email);
    await navigating(page, () => page.keyboard.press('Enter'));
    expect(await mainText(page)).toMatch(/check your email/i);
    await judge(page, 'check-email');
    const link = consoleLink(await sink.waitFor(email, nth));
    await page.goto(link);
    await followLinkPage(page, landing);
    return link;
  }

  /** A link may open on a page asking to confirm (mail scanners follow links too): confirm by keyboard. */
  async function followLinkPage(page: Page, landing = 'Overview'): Promise<void> {
    const overview = page.getByRole('heading', { name: landing });
    if (await overview.isVisible()) return;
    await judge(page, 'link-confirm');
    await tabTo(page, page.getByRole('button').first());
    await navigating(page, () => page.keyboard.press('Enter'));
    await expect.poll(() => overview.isVisible(), { timeout: 5_000 }).toBe(true);
  }

  async function open(page: Page, name: string): Promise<void> {
    await navigating(page, () => page.getByRole('link', { name, exact: true }).first().click());
    expect(await page.getByRole('heading', { name, exact: true }).count()).toBeGreaterThan(0);
  }

  it('walks the whole console: sign in, overview, keys, usage, members, sign out', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const firstLink = await signInByKeyboard(page, OWNER, 1);
    await overviewMatchesGetAccount(page);
    await judge(page, 'overview');
    const key = await createAndRevokeKey(page);
    await usageMatchesGetUsage(page, key);
    await judge(page, 'usage');
    for (const name of ['Billing', 'Connect', 'Connected apps']) {
      await open(page, name);
      await judge(page, name.toLowerCase().replace(/ /g, '-'));
    }
    await inviteMember(page);
    await signOut(page);
    await context.close();
    await chooserAndRefusals(firstLink);
    expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);
    if (backend === 'sqlite' && process.env.TOOLGATE_CONSOLE_DOC_SHOTS === '1') keepDocScreenshots();
  }, 180_000);

  async function overviewMatchesGetAccount(page: Page): Promise<void> {
    const account = await callTool(server.url, adminMade.key, 'get_account');
    expect(account.status).toBe(200);
    const r = account.body.results;
    const text = await mainText(page);
    expect(text).toContain('Acme Browsers');
    expect(text).toContain(r.plan);
    expect(text.toLowerCase()).toContain(String(r.status));
    expect(text).toMatch(new RegExp(r.token_balance === -1 ? 'Unlimited' : `\\b${num(r.token_balance)}\\b`));
    // Every window of get_account is on the page with its used and limit figures, as a bar.
    let windows = 0;
    for (const units of Object.values(r.fair_use as Record<string, Record<string, Record<string, any>>>))
      for (const byWindow of Object.values(units))
        for (const w of Object.values(byWindow)) {
          windows++;
          expect(text).toMatch(new RegExp(`\\b${num(w.used)}\\b\\D{1,24}\\b${num(w.limit)}\\b`));
          // A running window's end, as get_account gives it (a window not running has none), written
          // for people with its zone.
          if (w.resets_at) expect(text).toContain(formatTime(w.resets_at));
        }
    expect(windows).toBeGreaterThanOrEqual(6);
    const bars = await page.locator('progress, meter, [role=progressbar], [role=meter]').count();
    expect(bars).toBeGreaterThanOrEqual(windows);
  }

  /** Creates a key by keyboard, calls get_account with it (200), revokes it (confirmed) and sees 401. */
  async function createAndRevokeKey(page: Page): Promise<string> {
    await open(page, 'API keys');
    await judge(page, 'api-keys');
    await tabTo(page, page.getByLabel('Name', { exact: true }));
    await page.keyboard.type('browser key');
    await tabTo(page, page.getByRole('button', { name: 'Create key' }));
    await navigating(page, () => page.keyboard.press('Enter'));
    const shown = /\btg_[0-9A-Za-z]{11}\b/.exec(await mainText(page))?.[0];
    expect(shown, 'the full key is shown after "Create key"').toBeDefined();
    const key = shown!;
    expect(await page.getByRole('button', { name: /copy/i }).count()).toBeGreaterThan(0);
    await judge(page, 'api-key-created');
    const ok = await callTool(server.url, key, 'get_account');
    expect(ok.status).toBe(200);
    expect(ok.body.results.id).toBe(accountId);
    // Shown once: the list shows its hint, never the key again.
    await navigating(page, () => page.getByRole('link', { name: 'API keys', exact: true }).first().click());
    const listed = await mainText(page);
    expect(listed).not.toContain(key);
    expect(listed).toContain(key.slice(-4));
    await revoke(page, 'browser key');
    await expect.poll(async () => (await callTool(server.url, key, 'get_account')).status).toBe(401);
    return key;
  }

  /** Presses the key's "Revoke" button, then confirms: a browser dialog, a <dialog>, or a confirm page. */
  async function revoke(page: Page, keyName: string): Promise<void> {
    page.once('dialog', (d) => void d.accept());
    await navigating(page, () =>
      page.getByRole('row').filter({ hasText: keyName }).getByRole('button', { name: 'Revoke' }).click(),
    );
    const dialog = page.getByRole('dialog');
    const confirmPage = page.getByRole('heading', { name: /revoke/i });
    const scope = (await dialog.isVisible()) ? dialog : (await confirmPage.count()) > 0 ? page : undefined;
    if (!scope) return;
    await judge(page, 'api-key-revoke-confirm');
    await navigating(page, () =>
      scope
        .getByRole('button', { name: /revoke|confirm|yes/i })
        .first()
        .click(),
    );
  }

  /** The Usage page shows the calls the usage history (get_usage's source) has for today and in all. */
  async function usageMatchesGetUsage(page: Page, revokedKey: string): Promise<void> {
    const usage = await callTool(server.url, adminMade.key, 'get_usage', { period: 'month' });
    expect(usage.status).toBe(200);
    // get_usage's own call counts too: wait until the server's counts (flushed each second) hold it.
    const expected = usage.body.results.totals.calls + 1;
    await expect
      .poll(
        async () => (await usageHistory(server.url, accountId, daysAgo(29), today())).totals?.calls ?? -1,
        {
          timeout: 10_000,
        },
      )
      .toBe(expected);
    const report = await usageHistory(server.url, accountId, daysAgo(29), today());
    // The page sums the stored days and the counts not yet written; a flush under way can fall
    // between the two reads for a moment, so the page is opened again until it settles.
    let text = '';
    await expect
      .poll(
        async () => {
          await open(page, 'Usage');
          text = await mainText(page);
          return new RegExp(`\\b${num(report.totals.calls)} calls\\b`).test(text);
        },
        { timeout: 10_000 },
      )
      .toBe(true);
    expect(text).toMatch(new RegExp(`\\b${num(report.totals.calls)}\\b`));
    const todayRow = page.getByRole('row').filter({ hasText: formatDay(today(), true) });
    expect(await todayRow.count()).toBeGreaterThan(0);
    expect(await todayRow.first().innerText()).toMatch(new RegExp(`\\b${num(expected)}\\b`));
    // By tool and by key: the tools called and the keys that called them.
    expect(text).toContain('get_account');
    expect(text).toContain('get_usage');
    expect(text).toContain(revokedKey.slice(-4));
    expect(await page.locator('svg').count()).toBeGreaterThan(0);
    const csv = page.getByRole('link', { name: 'Download CSV' });
    const href = await csv.getAttribute('href');
    const res = await page.request.get(new URL(href!, page.url()).toString());
    expect(res.status()).toBe(200);
    expect(res.headers()['content-type']).toMatch(/text\/csv/);
    expect(await res.text()).toContain(today());
  }

  /** The owner invites a member, who signs in through their own link as a member and cannot create keys. */
  async function inviteMember(page: Page): Promise<void> {
    await open(page, 'Members');
    await judge(page, 'members');
    await page.getByLabel(/email/i).first().fill(MEMBER);
    await navigating(page, () => page.getByRole('button', { name: /invite/i }).click());
    expect(await mainText(page)).toContain(MEMBER);
    const member = await browser.newContext();
    const mpage = await member.newPage();
    const invitation = await sink.waitFor(MEMBER, 1);
    expect(invitation.text).toContain(`${OWNER} invited you to the account "Acme Browsers"`);
    await mpage.goto(consoleLink(invitation));
    await followLinkPage(mpage);
    expect(await mainText(mpage)).toContain('Acme Browsers');
    await navigating(mpage, () => mpage.getByRole('link', { name: 'API keys', exact: true }).first().click());
    expect(await mpage.getByRole('heading', { name: 'API keys' }).count()).toBeGreaterThan(0);
    expect(await mpage.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    expect(await mpage.getByRole('button', { name: 'Revoke' }).count()).toBe(0);
    await judge(mpage, 'api-keys-member');
    // Members is for owners: a member has no link to it.
    expect(await mpage.getByRole('link', { name: 'Members', exact: true }).count()).toBe(0);
    await member.close();
  }

  async function signOut(page: Page): Promise<void> {
    await navigating(page, () => page.getByRole('button', { name: /sign out/i }).click());
    await page.goto(`${server.url}/console/`);
    expect(await page.getByRole('heading', { name: 'Overview' }).count()).toBe(0);
    expect(await page.getByLabel(/email/i).count()).toBeGreaterThan(0);
  }

  /**
   * One email in two accounts chooses after sign-in; a used link and another account's URL get their
   * own pages (judged like every other page).
   */
  async function chooserAndRefusals(usedLink: string): Promise<void> {
    const second = await accountWithOwner(server.url, {
      name: 'Second Browsers',
      email: `second-${backend}@example.com`,
    });
    const added = await adminCall(server.url, 'POST', `/accounts/${second.accountId}/users`, {
      email: OWNER,
      role: 'member',
    });
    expect(added.status).toBe(201);
    const context = await browser.newContext();
    const page = await context.newPage();
    await signInByKeyboard(page, OWNER, 2, 'Your accounts');
    await judge(page, 'chooser');
    await navigating(page, () => page.getByRole('link', { name: 'Second Browsers' }).click());
    expect(await page.getByRole('heading', { name: 'Overview' }).count()).toBe(1);
    expect(await mainText(page)).toContain('Second Browsers');
    // A member of this one: no key creation here either.
    await open(page, 'API keys');
    expect(await page.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    // Its page opens (it spends nothing); its button is refused.
    await page.goto(usedLink);
    const answered = page.waitForResponse(
      (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/console/auth',
    );
    await navigating(page, () => page.getByRole('button', { name: 'Sign in' }).click());
    expect((await answered).status()).toBe(400);
    expect(await page.getByRole('heading', { name: /cannot be used/i }).count()).toBe(1);
    await judge(page, 'link-invalid');
    const other = await accountWithOwner(server.url, {
      name: 'Not Yours',
      email: `third-${backend}@example.com`,
    });
    const foreign = await page.goto(`${server.url}/console/a/${other.accountId}/`);
    expect(foreign?.status()).toBe(404);
    expect(await page.locator('body').innerText()).not.toContain('Not Yours');
    await judge(page, 'not-found');
    await context.close();
  }

  /** The three pages docs/console.md shows, copied from this run's screenshots when asked (TOOLGATE_CONSOLE_DOC_SHOTS=1). */
  function keepDocScreenshots(): void {
    const docs = join(ROOT, 'docs', 'console');
    mkdirSync(docs, { recursive: true });
    for (const name of ['overview', 'usage', 'api-keys']) {
      const from = shots.get(name);
      if (from) copyFileSync(from, join(docs, `${name}.png`));
    }
  }
});
