/**
 * The customer alert mailer on real stores, both backends: with no webhook endpoint at all, a
 * window's 80% and 100% are recorded and each owner who wants them is mailed once per crossing
 * (members and owners who turned them off are not); an endpoint's own thresholds reach the endpoint
 * only; a failed send is retried on the schedule and fails for good after it; a mail server that
 * never answers is given up at the timeout. On PostgreSQL, two stores with a mailer each (two
 * servers) send every mail exactly once between them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALERT_RETRY_DELAYS_SECONDS, ALERT_THRESHOLDS, type CustomerAlert } from '../../src/domain/alerts.js';
import { FixedClock } from '../../src/domain/clock.js';
import { newId } from '../../src/domain/ids.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { createServices, type Services } from '../../src/service/index.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/store.js';
import { AlertMailer, type AlertMailPort } from '../../src/webhooks/alert-mailer.js';
import { WebhookInterest } from '../../src/webhooks/interest.js';
import { accountOnPlan, KEY_SECRET, scratchServices, T0 } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore, scratchSchemaName } from '../postgres.js';

const silent = { warn() {}, info() {} };
const pg = await postgresAvailable();
const backends: ('sqlite' | 'postgres')[] = ['sqlite', ...(pg ? (['postgres'] as const) : [])];
const now = () => Math.floor(clock.now() / 1000);
let clock: FixedClock;

interface Setup {
  store: Store;
  services: Services;
  interest: WebhookInterest;
  close(): Promise<void>;
}

/** Services as a server with customer alerts on has them: 80 and 100 recorded for every account. */
async function setUp(backend: 'sqlite' | 'postgres', schema = scratchSchemaName()): Promise<Setup> {
  clock = new FixedClock(T0);
  let store: Store;
  let close: () => Promise<void>;
  if (backend === 'sqlite') {
    const h = await scratchServices();
    store = h.store;
    close = () => h.close();
  } else {
    const scratch = scratchPostgresStore(schema);
    store = scratch.store;
    await store.migrate(DEFAULT_PLANS, T0 / 1000);
    close = scratch.cleanup;
  }
  const interest = new WebhookInterest(store, silent, { always: ALERT_THRESHOLDS });
  const services = createServices({
    store,
    clock,
    keyPrefix: 'tg',
    keySecret: KEY_SECRET,
    webhookInterest: interest,
    webhookAllowPrivate: true,
  });
  return { store, services, interest, close };
}

/** A mail port that keeps what it was asked to send, or fails as told. */
function recordingPort(fail?: () => Promise<never>) {
  const sent: CustomerAlert[] = [];
  const port: AlertMailPort = {
    async send(alert) {
      if (fail) await fail();
      sent.push(alert);
    },
  };
  return { sent, port };
}

/** An account whose enrich records allow 10 per 5 h (1,000 a week), with two owners and a member. */
async function accountWithPeople(services: Services) {
  const accountId = await accountOnPlan(services, { records5h: 10, records1w: 1000, requests5h: 1000 });
  const add = async (email: string, role: 'owner' | 'member') => {
    const user = await services.users.add(accountId, email, role);
    if (!user.ok) throw new Error(user.error.message);
    return user.value.id;
  };
  return {
    accountId,
    ann: await add('ann@example.com', 'owner'),
    quiet: await add('quiet@example.com', 'owner'),
    member: await add('member@example.com', 'member'),
  };
}

const fanOut = (store: Store) => store.webhooks.fanOut(now(), () => newId('whd'), 200);
const record = async (services: Services, accountId: string, records: number) => {
  const r = await services.usage.record(accountId, { category: 'enrich', records });
  if (!r.ok) throw new Error(r.error.message);
};

describe.each(backends)('the alert mailer, on %s', (backend) => {
  let s: Setup;
  beforeEach(async () => {
    s = await setUp(backend);
  });
  afterEach(() => s.close());

  it('mails 80% and 100% of a window to each owner who wants them, once, with no webhook endpoint', async () => {
    const people = await accountWithPeople(s.services);
    expect((await s.services.alerts.setMailsOn(people.accountId, people.quiet, false)).ok).toBe(true);
    for (const records of [7, 1, 1, 1]) await record(s.services, people.accountId, records);
    const events = await s.store.webhooks.events({ limit: 100 });
    expect(events.map((e) => [e.data.unit, e.data.window, e.data.threshold])).toEqual([
      ['records', '5h', 80],
      ['records', '5h', 100],
    ]);
    await fanOut(s.store);
    const { sent, port } = recordingPort();
    const mailer = new AlertMailer({ store: s.store, mail: port, clock, log: silent });
    await mailer.runOnce();
    await mailer.runOnce();
    expect(
      sent.map((a) => [
        a.to,
        a.accountId,
        a.crossing.type,
        'threshold' in a.crossing && a.crossing.threshold,
      ]),
    ).toEqual([
      ['ann@example.com', people.accountId, 'fair_use.threshold', 80],
      ['ann@example.com', people.accountId, 'fair_use.threshold', 100],
    ]);
    expect((await s.store.alerts.list({ limit: 10 })).map((m) => [m.status, m.attempts])).toEqual([
      ['sent', 1],
      ['sent', 1],
    ]);
  });

  it('gives an endpoint its own thresholds only, and the owners 80 and 100 only', async () => {
    const added = await s.services.webhooks.add({
      url: 'http://127.0.0.1:9/hooks',
      events: ['fair_use.threshold'],
      thresholds: [50],
    });
    if (!added.ok) throw new Error(added.error.message);
    await s.interest.refresh();
    const people = await accountWithPeople(s.services);
    await record(s.services, people.accountId, 8);
    await fanOut(s.store);
    const deliveries = await s.store.webhooks.listDeliveries(added.value.id, { limit: 10 });
    const events = await s.store.webhooks.events({ limit: 10 });
    const thresholdOf = (eventId: string) => events.find((e) => e.id === eventId)?.data.threshold;
    expect(deliveries.map((d) => thresholdOf(d.eventId))).toEqual([50]);
    const mails = await s.store.alerts.list({ limit: 10 });
    expect(mails.map((m) => thresholdOf(m.eventId))).toEqual([80, 80]);
  });

  it('retries a failed send on the schedule, then fails for good, logging it', async () => {
    const people = await accountWithPeople(s.services);
    await s.services.alerts.setMailsOn(people.accountId, people.quiet, false);
    await record(s.services, people.accountId, 8);
    await fanOut(s.store);
    const warnings: string[] = [];
    const { sent, port } = recordingPort(() => Promise.reject(new Error('451 try again later')));
    const log = { info() {}, warn: (_: object, message: string) => void warnings.push(message) };
    const mailer = new AlertMailer({ store: s.store, mail: port, clock, log });
    for (const delay of ALERT_RETRY_DELAYS_SECONDS) {
      await mailer.runOnce();
      const [mail] = await s.store.alerts.list({ limit: 10 });
      expect(mail).toMatchObject({
        status: 'pending',
        nextAttemptAt: now() + delay,
        lastError: '451 try again later',
      });
      clock.advance(delay - 1);
      await mailer.runOnce(); // not due yet
      clock.advance(1);
    }
    await mailer.runOnce();
    const [mail] = await s.store.alerts.list({ limit: 10 });
    expect(mail).toMatchObject({ status: 'failed', attempts: ALERT_RETRY_DELAYS_SECONDS.length + 1 });
    expect(sent).toEqual([]);
    expect(warnings.at(-1)).toBe('alert mail failed for good after its last attempt');
  });

  it('gives up on a mail server that never answers at the timeout, keeping the mail for later', async () => {
    const people = await accountWithPeople(s.services);
    await s.services.alerts.setMailsOn(people.accountId, people.quiet, false);
    await record(s.services, people.accountId, 8);
    await fanOut(s.store);
    const port: AlertMailPort = { send: () => new Promise(() => {}) };
    const mailer = new AlertMailer({ store: s.store, mail: port, clock, log: silent, timeoutMs: 100 });
    const started = Date.now();
    await mailer.runOnce();
    expect(Date.now() - started).toBeLessThan(5_000);
    const [mail] = await s.store.alerts.list({ limit: 10 });
    expect(mail).toMatchObject({ status: 'pending', attempts: 1 });
    expect(mail?.lastError).toMatch(/no answer from the mail server within 100 ms/);
  });
});

describe.skipIf(!pg)('two servers on one PostgreSQL database', () => {
  let a: Setup;
  let other: PostgresStore;
  beforeEach(async () => {
    const schema = scratchSchemaName();
    a = await setUp('postgres', schema);
    other = new PostgresStore({ url: POSTGRES_URL, schema });
  });
  afterEach(async () => {
    await other.close();
    await a.close();
  });

  it('send every mail exactly once between their two mailers', async () => {
    const accounts = await Promise.all(Array.from({ length: 10 }, () => accountWithPeople(a.services)));
    // 80% and 100% of each account's 5 h window: 20 crossings, 2 owners each.
    await Promise.all(accounts.map((p) => record(a.services, p.accountId, 8)));
    await Promise.all(accounts.map((p) => record(a.services, p.accountId, 2)));
    // Both servers fan out at once: each event is taken by one.
    await Promise.all([fanOut(a.store), fanOut(other), fanOut(a.store), fanOut(other)]);
    const sentBy: Record<string, string[]> = { a: [], b: [] };
    const slowPort = (name: string): AlertMailPort => ({
      async send(alert) {
        await new Promise((r) => setTimeout(r, 10));
        sentBy[name]!.push(alert.id);
      },
    });
    const mailerA = new AlertMailer({ store: a.store, mail: slowPort('a'), clock, log: silent, batch: 4 });
    const mailerB = new AlertMailer({ store: other, mail: slowPort('b'), clock, log: silent, batch: 4 });
    await Promise.all([mailerA.runOnce(), mailerB.runOnce(), mailerA.runOnce(), mailerB.runOnce()]);
    const all = [...sentBy.a!, ...sentBy.b!];
    expect(all).toHaveLength(40);
    expect(new Set(all).size).toBe(40);
    expect(sentBy.a!.length).toBeGreaterThan(0);
    expect(sentBy.b!.length).toBeGreaterThan(0);
    const mails = await other.alerts.list({ limit: 100 });
    expect(mails.filter((m) => m.status === 'sent')).toHaveLength(40);
  });
});
