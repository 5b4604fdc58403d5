/**
 * Buying in a real browser (Debian's chromium through playwright-core) against a real server
 * process with payments on, its Stripe a local Stripe-compatible server whose hosted pages pay and
 * send the signed events: an owner buys a pack and subscribes to a plan from Billing, each through
 * Stripe's page and back, sees the tokens and the plan arrive, and opens "Manage billing"; a member
 * sees the offers without a button. Every page passes axe-core with no serious violation.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AxeViolation,
  browserAvailable,
  launch,
  mainText,
  navigating,
  seriousViolations,
} from '../console/browser-helpers.js';
import {
  accountWithOwner,
  adminCall,
  type Backend,
  type ConsoleServer,
  startConsoleServer,
} from '../console/console-server-helpers.js';
import { type SmtpSink, startSmtpSink } from '../console/smtp-sink-helpers.js';
import { postgresAvailable } from '../postgres.js';
import { type FakeStripe, startFakeStripe } from './fake-stripe.js';

const browserOk = browserAvailable();
const backends: Backend[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];

const LIMITS = {
  enrich: { records: { '5h': 100, '1w': 200 }, requests: { '5h': 300 } },
  search: { records: { '5h': 100, '1w': 200 }, requests: { '5h': 300 } },
};

describe.skipIf(!browserOk).each(backends)('buying in chromium, on %s', (backend) => {
  let fake: FakeStripe;
  let sink: SmtpSink;
  let server: ConsoleServer;
  let browser: Browser;
  let accountId: string;
  const violations: AxeViolation[] = [];
  const OWNER = `buyer-${backend}@example.com`;
  const MEMBER = `viewer-${backend}@example.com`;

  const admin = async (method: string, path: string, body?: unknown) => {
    const r = await adminCall(server.url, method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };

  beforeAll(async () => {
    fake = await startFakeStripe();
    sink = await startSmtpSink();
    server = await startConsoleServer(backend, sink.url, {
      TOOLGATE_STRIPE_SECRET_KEY: fake.secretKey,
      TOOLGATE_STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
      TOOLGATE_STRIPE_API_URL: fake.url,
    });
    fake.setWebhookUrl(`${server.url}/webhooks/stripe`);
    const monthly = fake.addPrice({ type: 'recurring', unitAmount: 1900, interval: 'month' });
    const once = fake.addPrice({ type: 'one_time', unitAmount: 500 });
    await admin('PUT', '/plans/pro', { limits: LIMITS, stripe_price: monthly.id, period_tokens: 1000 });
    await admin('PUT', '/topups/small', { tokens: 500, stripe_price: once.id });
    ({ accountId } = await accountWithOwner(server.url, { name: 'Acme Buyers', email: OWNER, tokens: 0 }));
    await admin('POST', `/accounts/${accountId}/users`, { email: MEMBER, role: 'member' });
    browser = await launch();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await sink?.close();
    await fake?.close();
  });

  async function signIn(email: string): Promise<Page> {
    const { url } = await admin('POST', '/console/links', { email, account_id: accountId });
    const page = await (await browser.newContext()).newPage();
    await page.goto(url);
    const confirm = page.getByRole('button', { name: /sign in|continue/i });
    if (await confirm.first().isVisible()) await navigating(page, () => confirm.first().click());
    await navigating(page, () => page.getByRole('link', { name: 'Billing', exact: true }).first().click());
    expect(await page.getByRole('heading', { name: 'Billing', exact: true }).count()).toBe(1);
    return page;
  }

  /** Billing, reloaded until `text` is on it: Stripe's events reach toolgate on their own schedule. */
  async function until(page: Page, text: RegExp): Promise<void> {
    await expect
      .poll(
        async () => {
          await page.goto(`${server.url}/console/a/${accountId}/billing`);
          return text.test(await mainText(page));
        },
        { timeout: 10_000 },
      )
      .toBe(true);
  }

  /** Clicks `button` on Billing, pays on Stripe's page, and comes back to Billing. */
  async function pay(page: Page, button: string): Promise<void> {
    await navigating(page, () => page.getByRole('button', { name: button }).click());
    expect(page.url()).toMatch(new RegExp(`^${fake.url}/pay/`));
    await navigating(page, () => page.getByRole('button', { name: 'Pay' }).click());
    expect(page.url()).toContain(`/console/a/${accountId}/billing?checkout=success`);
    expect(await mainText(page)).toContain('Thank you: the payment went through.');
  }

  it('buys a pack, subscribes to a plan, and opens Manage billing', async () => {
    const page = await signIn(OWNER);
    const offers = await mainText(page);
    expect(offers).toContain('$19.00 / month');
    expect(offers).toContain('$5.00');
    violations.push(...(await seriousViolations(page, 'billing-offers')));
    await pay(page, 'Buy small');
    await until(page, /Token balance 500\b/);
    await pay(page, 'Subscribe to pro');
    // The plan, and its first period's 1,000 tokens.
    await until(page, /Plan pro .*Token balance 1,500/);
    expect(await page.getByRole('row', { name: /pro/ }).innerText()).toContain('Current plan');
    violations.push(...(await seriousViolations(page, 'billing-subscribed')));
    await navigating(page, () => page.getByRole('button', { name: 'Manage billing' }).click());
    expect(await page.title()).toContain('Billing portal');
    await navigating(page, () => page.getByRole('link', { name: /Return/ }).click());
    expect(page.url()).toBe(`${server.url}/console/a/${accountId}/billing`);
    const shown = await admin('GET', `/accounts/${accountId}/billing`);
    expect(shown).toMatchObject({ subscription_status: 'active' });
    expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);
  }, 120_000);

  it('shows a member the offers without a button', async () => {
    const page = await signIn(MEMBER);
    expect(await mainText(page)).toContain(
      "Only the account's owners can subscribe, buy tokens and manage billing.",
    );
    expect(await page.getByRole('button', { name: /Buy|Subscribe|Manage billing/ }).count()).toBe(0);
  }, 60_000);
});
