/**
 * The dispatcher end to end on a real SQLite store and a real receiver that checks every request
 * with the `standardwebhooks` verifier: a threshold crossed by a consumption arrives signed, once;
 * failures are retried on the schedule with jitter and fail for good after about a day; a replay
 * sends the same message again; an endpoint that never answers times out without holding anything.
 */
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/domain/clock.js';
import type { Result } from '../../src/domain/errors.js';
import { RETRY_DELAYS_SECONDS } from '../../src/domain/webhooks.js';
import { createServices, type ServiceDeps, type Services } from '../../src/service/index.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { WebhookInterest } from '../../src/webhooks/interest.js';
import { WebhookSender } from '../../src/webhooks/sender.js';
import { accountOnPlan, type Harness, scratchServices } from '../helpers.js';
import { type Receiver, startReceiver } from './receiver.js';

const silent = { warn() {}, info() {} };

function value<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

describe('webhook dispatcher', () => {
  let h: Harness;
  let receiver: Receiver;
  let clock: FixedClock;
  let services: Services;
  let deps: ServiceDeps;
  let sender: WebhookSender;
  let dispatcher: WebhookDispatcher;
  let outcomes: string[];
  let random: number;

  beforeEach(async () => {
    h = await scratchServices();
    receiver = await startReceiver();
    // The verifier checks timestamps against the real time: start there, and move by hand.
    clock = new FixedClock(Date.now());
    const interest = new WebhookInterest(h.store, silent);
    sender = new WebhookSender({ timeoutMs: 500, allowPrivate: true });
    outcomes = [];
    random = 0.5;
    dispatcher = new WebhookDispatcher({
      store: h.store,
      sender,
      clock,
      timeoutMs: 500,
      log: silent,
      random: () => random,
      onOutcome: (o) => outcomes.push(o),
    });
    deps = {
      ...h.deps,
      clock,
      webhookInterest: interest,
      webhookAllowPrivate: true,
      webhooksChanged: () => interest.refresh(),
    };
    services = createServices(deps);
  });

  afterEach(async () => {
    await dispatcher.stop();
    await sender.close();
    await receiver.close();
    await h.close();
  });

  async function endpointAndAccount(): Promise<string> {
    const added = await services.webhooks.add({
      url: receiver.url,
      events: ['fair_use.threshold'],
      thresholds: [80, 100],
    });
    if (!added.ok) throw new Error(added.error.message);
    receiver.secret = added.value.secret;
    return accountOnPlan(services, { records5h: 10, records1w: 1000, requests5h: 1000 });
  }

  const consume = async (accountId: string, records: number) => {
    const r = await services.usage.record(accountId, { category: 'enrich', records });
    if (!r.ok) throw new Error(r.error.message);
  };

  it('delivers each crossing once, signed as Standard Webhooks verifies', async () => {
    const accountId = await endpointAndAccount();
    await consume(accountId, 7);
    await dispatcher.runOnce();
    expect(receiver.received).toHaveLength(0);
    await consume(accountId, 2); // 90%: 80 crossed
    await consume(accountId, 1); // 100%: crossed
    await dispatcher.runOnce();
    await dispatcher.runOnce();
    expect(receiver.received).toHaveLength(2);
    for (const r of receiver.received) {
      expect(r.verified).toMatchObject({ ok: true });
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['webhook-id']).toMatch(/^msg_/);
      expect(r.headers.authorization).toBeUndefined();
    }
    const payloads = receiver.received.map(
      (r) => (r.verified as { payload: { type: string; data: Record<string, unknown> } }).payload,
    );
    expect(payloads.map((p) => [p.type, p.data.threshold, p.data.used, p.data.remaining])).toEqual([
      ['fair_use.threshold', 80, 9, 1],
      ['fair_use.threshold', 100, 10, 0],
    ]);
    expect(outcomes).toEqual(['delivered', 'delivered']);
    // A signature made with another secret is refused by the same verifier: the check is real.
    const other = new Webhook('whsec_b3RoZXItc2VjcmV0LW90aGVyLXNlY3JldA==');
    const r0 = receiver.received[0]!;
    expect(() => other.verify(r0.body, r0.headers as Record<string, string>)).toThrow();
  });

  it('retries on the schedule with jitter, with the same webhook-id, then fails for good', async () => {
    const accountId = await endpointAndAccount();
    receiver.answer = 503;
    await consume(accountId, 8);
    await dispatcher.runOnce();
    expect(receiver.received).toHaveLength(1);
    const [endpoint] = value(await services.webhooks.list());
    let [d] = value(await services.webhooks.deliveries(endpoint!.id));
    expect(d).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_status_code: 503,
      last_error: 'answered 503',
    });
    const start = Math.floor(clock.now() / 1000);
    // Jitter: random 0.5 is the middle of +/-20%, so the first retry is at exactly 5 s.
    expect(Date.parse(d!.next_attempt_at!) / 1000).toBe(start + 5);

    random = 0; // the earliest: 80% of each delay
    for (let i = 1; i < RETRY_DELAYS_SECONDS.length + 1; i++) {
      // Not before it is due.
      clock.advance(RETRY_DELAYS_SECONDS[i - 1]! * (i === 1 ? 1 : 0.8) - 1);
      await dispatcher.runOnce();
      expect(receiver.received).toHaveLength(i);
      clock.advance(1);
      await dispatcher.runOnce();
      expect(receiver.received).toHaveLength(i + 1);
    }
    [d] = value(await services.webhooks.deliveries(endpoint!.id));
    expect(d).toMatchObject({ status: 'failed', attempts: 8, next_attempt_at: null });
    const hours = (clock.now() / 1000 - start) / 3600;
    expect(hours).toBeGreaterThan(20);
    expect(hours).toBeLessThan(36);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    // Each attempt signed for its own time: checked by the library's own signer.
    const wh = new Webhook(receiver.secret!);
    for (const r of receiver.received) {
      const ts = Number(r.headers['webhook-timestamp']);
      expect(r.headers['webhook-signature']).toBe(
        wh.sign(String(r.headers['webhook-id']), new Date(ts * 1000), r.body),
      );
    }
    expect(outcomes.filter((o) => o === 'retried')).toHaveLength(7);
    expect(outcomes.at(-1)).toBe('failed');

    // Replayed: sent again at once, the same message.
    receiver.answer = 200;
    const replay = await services.webhooks.replay(d!.id);
    expect(replay.ok && replay.value.status).toBe('pending');
    await dispatcher.runOnce();
    expect(receiver.received).toHaveLength(9);
    expect(receiver.received.at(-1)!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    [d] = value(await services.webhooks.deliveries(endpoint!.id));
    expect(d).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200 });
  });

  it('counts an endpoint that does not answer in time as a failed attempt', async () => {
    const accountId = await endpointAndAccount();
    receiver.answer = 'hang';
    await consume(accountId, 8);
    await dispatcher.runOnce();
    const [endpoint] = value(await services.webhooks.list());
    const [d] = value(await services.webhooks.deliveries(endpoint!.id));
    expect(d).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_status_code: null,
      last_error: 'no answer within 500 ms',
    });
  });

  it('refuses loopback endpoints unless private addresses are allowed, at add and at send', async () => {
    const strict = createServices({ ...deps, webhookAllowPrivate: false });
    const refused = await strict.webhooks.add({ url: receiver.url });
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.error.message).toMatch(/127\.0\.0\.1.*TOOLGATE_WEBHOOK_ALLOW_PRIVATE/);
    for (const url of [
      'http://169.254.169.254/latest',
      'http://[::1]:80/',
      'http://10.1.2.3/',
      'http://localhost/x',
    ]) {
      const r = await strict.webhooks.add({ url });
      expect(r.ok, url).toBe(false);
    }
    const guarded = new WebhookSender({ timeoutMs: 500, allowPrivate: false });
    try {
      const sent = await guarded.send(receiver.url, 'whsec_c2VjcmV0', { id: 'msg_x', body: '{}' }, 0);
      expect(sent).toMatchObject({ delivered: false, statusCode: null });
      expect(sent.error).toMatch(/127\.0\.0\.1/);
      const named = await guarded.send(
        receiver.url.replace('127.0.0.1', 'localhost'),
        'whsec_c2VjcmV0',
        { id: 'msg_x', body: '{}' },
        0,
      );
      expect(named).toMatchObject({ delivered: false, statusCode: null });
      expect(named.error).toMatch(/localhost resolves to/);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await guarded.close();
    }
  });
});
