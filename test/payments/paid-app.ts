/**
 * @module toolgate with payments on, in this process, listening on a socket, on either backend:
 * its Stripe calls go to a local Stripe-compatible server (fake-stripe.ts), and events reach its
 * /webhooks/stripe over HTTP, signed as Stripe signs them.
 */
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { systemClock } from '../../src/domain/clock.js';
import type { UnpaidPolicy } from '../../src/domain/payments.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { StripeGateway } from '../../src/payments/stripe-gateway.js';
import { createServices, type Services } from '../../src/service/index.js';
import { billingUrl } from '../../src/service/payments.js';
import { withReadCache } from '../../src/store/cached-reads.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { ADMIN_TOKEN, KEY_SECRET, scratchDir } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable, scratchSchemaName } from '../postgres.js';
import { type FakeStripe, type StripeEvent, startFakeStripe } from './fake-stripe.js';

export type Backend = 'SQLite' | 'PostgreSQL';

export const BACKENDS: Backend[] = [
  'SQLite',
  ...((await postgresAvailable()) ? (['PostgreSQL'] as const) : []),
];

export interface PaidApp {
  fake: FakeStripe;
  store: Store;
  services: Services;
  app: FastifyInstance;
  url: string;
  webhookUrl: string;
  /** The environment a toolgate process needs to serve the same database with the same Stripe. */
  serverEnv: Record<string, string>;
  /** Delivers each event, signed, in order; their answers' statuses. */
  deliver(events: StripeEvent[]): Promise<number[]>;
  close(): Promise<void>;
}

async function openStore(backend: Backend): Promise<{
  store: Store;
  reads: ReturnType<typeof withReadCache>['reads'];
  env: Record<string, string>;
  cleanup: () => Promise<void>;
}> {
  if (backend === 'SQLite') {
    const { dir, cleanup } = scratchDir();
    const opened = withReadCache((observer) => new SqliteStore({ path: `${dir}/toolgate.db`, observer }));
    return {
      ...opened,
      env: { TOOLGATE_DATABASE_URL: `sqlite:${dir}/toolgate.db` },
      cleanup: async () => cleanup(),
    };
  }
  const schema = scratchSchemaName();
  const opened = withReadCache((observer) => new PostgresStore({ url: POSTGRES_URL, schema, observer }));
  return {
    ...opened,
    env: { TOOLGATE_DATABASE_URL: POSTGRES_URL, TOOLGATE_DATABASE_SCHEMA: schema },
    cleanup: () => opened.store.dropSchema().catch(() => {}),
  };
}

export async function paidApp(
  backend: Backend,
  opts: { unpaid?: UnpaidPolicy; fake?: FakeStripe } = {},
): Promise<PaidApp> {
  const fake = opts.fake ?? (await startFakeStripe());
  const { store, reads, env, cleanup } = await openStore(backend);
  await store.migrate(DEFAULT_PLANS, Math.floor(Date.now() / 1000));
  const provider = new StripeGateway(
    { secretKey: fake.secretKey, webhookSecret: fake.webhookSecret, apiUrl: fake.url },
    systemClock,
  );
  const services = createServices({
    store,
    reads,
    clock: systemClock,
    keyPrefix: 'tg',
    keySecret: KEY_SECRET,
    payments: { provider, fallbackPlan: 'free', unpaid: opts.unpaid ?? 'fallback' },
  });
  const app = await buildApp({ services, adminToken: ADMIN_TOKEN });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const webhookUrl = `${url}/webhooks/stripe`;
  fake.setWebhookUrl(webhookUrl);
  return {
    fake,
    store,
    services,
    app,
    url,
    webhookUrl,
    serverEnv: {
      ...env,
      TOOLGATE_KEY_SECRET: KEY_SECRET,
      TOOLGATE_STRIPE_SECRET_KEY: fake.secretKey,
      TOOLGATE_STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
      TOOLGATE_STRIPE_API_URL: fake.url,
      TOOLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      NODE_ENV: 'production',
    },
    async deliver(events) {
      const statuses: number[] = [];
      for (const e of events) statuses.push((await fake.deliver(webhookUrl, e)).status);
      return statuses;
    },
    async close() {
      await app.close();
      if (!opts.fake) await fake.close();
      await cleanup();
      await store.close();
    },
  };
}

/** A pro plan (monthly, granting `periodTokens` a paid period) and a one-time pack of 500 tokens, sold in Stripe. */
export async function sellPlanAndPack(h: PaidApp, periodTokens = 1000) {
  const monthly = h.fake.addPrice({
    type: 'recurring',
    unitAmount: 1900,
    currency: 'usd',
    interval: 'month',
  });
  const yearly = h.fake.addPrice({ type: 'recurring', unitAmount: 19000, currency: 'usd', interval: 'year' });
  const once = h.fake.addPrice({ type: 'one_time', unitAmount: 500, currency: 'usd' });
  const free = (await h.store.plans.get('free'))!;
  const pro = await h.services.plans.put('pro', {
    limits: free.limits,
    stripe_price: monthly.id,
    period_tokens: periodTokens,
  });
  const team = await h.services.plans.put('team', { limits: free.limits, stripe_price: yearly.id });
  const pack = await h.services.payments.setTopup('small', { tokens: 500, stripe_price: once.id });
  if (!pro.ok || !team.ok || !pack.ok)
    throw new Error(`could not sell: ${JSON.stringify([pro, team, pack])}`);
  return { monthly, yearly, once };
}

/** The id of a Checkout Session the account opened for `what`, as its Billing page's button does. */
export async function checkoutFor(
  h: PaidApp,
  accountId: string,
  what: { plan: string } | { topup: string },
): Promise<string> {
  const back = billingUrl(h.url, accountId);
  const made = await h.services.payments.checkout(accountId, what, {
    success: `${back}?checkout=success`,
    cancel: back,
  });
  if (!made.ok || !('url' in made.value)) throw new Error(`no Checkout Session: ${JSON.stringify(made)}`);
  return new URL(made.value.url).pathname.split('/').pop()!;
}

export async function newAccount(h: PaidApp, tokens = 0): Promise<string> {
  const made = await h.services.accounts.create({ name: 'Acme', plan: 'free', tokens });
  if (!made.ok) throw new Error(made.error.message);
  return made.value.id;
}

/** The account's balance and the sum of its ledger's deltas: equal when no token was lost or made twice. */
export async function balanceAndLedger(store: Store, accountId: string) {
  const account = (await store.accounts.get(accountId))!;
  let sum = 0;
  let after: string | undefined;
  for (;;) {
    const page = await store.ledger.list(
      accountId,
      after === undefined ? { limit: 500 } : { limit: 500, after },
    );
    for (const e of page) sum += e.delta;
    if (page.length < 500) break;
    after = page[page.length - 1]!.id;
  }
  return { balance: account.tokenBalance, ledger: sum };
}
