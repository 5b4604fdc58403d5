/**
 * @module The webhook dispatcher, one per server: fans recorded events out to the endpoints that
 * want them, leases due deliveries (one server at a time per delivery, however many run), sends them
 * and records each attempt: delivered, due again after a backoff with jitter, or failed once the
 * schedule (about a day) is spent. It runs beside the requests, never in them: a slow or dead
 * endpoint costs a request nothing. A server killed mid-delivery leaves its lease to run out; the
 * delivery is then taken by another server, or by this one after its restart.
 */
import { randomBytes } from 'node:crypto';
import { type Clock, nowSeconds } from '../domain/clock.js';
import { newId } from '../domain/ids.js';
import { retryDelay } from '../domain/webhooks.js';
import type { DeliveryOutcome } from '../metrics/metrics.js';
import type { DeliveryResult, DueDelivery, Store } from '../store/store.js';
import { FAN_OUT_BATCH } from '../store/webhook-rows.js';
import type { WebhookSender } from './sender.js';

export interface DispatcherOptions {
  store: Store;
  sender: WebhookSender;
  clock: Clock;
  /** How long an endpoint has to answer: a lease lasts twice that, so it never runs out mid-attempt. */
  timeoutMs: number;
  /** How often to look for events and due deliveries (other servers' too). */
  pollMs?: number;
  /** Deliveries sent at once by this server. */
  batch?: number;
  /** Finished deliveries older than this are deleted. */
  retentionDays?: number;
  random?: () => number;
  log: { warn(fields: object, message: string): void; info(fields: object, message: string): void };
  /** Told of every attempt's outcome (metrics). */
  onOutcome?: (outcome: DeliveryOutcome) => void;
}

const PRUNE_EVERY_MS = 3_600_000;

export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private failing = false;
  private lastPrune = 0;
  /** This server's leases: only its own can settle what it claimed. */
  private readonly leaseToken = randomBytes(12).toString('base64url');

  constructor(private readonly o: DispatcherOptions) {}

  start(): void {
    this.schedule();
  }

  /** Look now (an event was just recorded, or a delivery replayed), not at the next poll. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.run();
  }

  /** Stops polling and waits for the attempts under way (each bounded by the timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass: fan out, then send what is due until nothing is; resolves when done (tests await it). */
  async runOnce(): Promise<void> {
    while (this.running) await this.running;
    this.running = this.run();
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.wake(), this.o.pollMs ?? 1_000);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.pass();
      } while (this.again && !this.stopped);
      if (this.failing) this.o.log.info({}, 'webhook dispatcher: the store answers again');
      this.failing = false;
    } catch (err) {
      // Logged once per outage, not once per poll.
      if (!this.failing)
        this.o.log.warn({ err: (err as Error).message }, 'webhook dispatcher: the store failed; retrying');
      this.failing = true;
    } finally {
      this.running = undefined;
      this.schedule();
    }
  }

  private async pass(): Promise<void> {
    const { store } = this.o;
    const batch = this.o.batch ?? 32;
    while (!this.stopped) {
      const now = nowSeconds(this.o.clock);
      await this.prune(now);
      const newDeliveryId = () => newId('whd', this.o.clock.now());
      while ((await store.webhooks.fanOut(now, newDeliveryId, FAN_OUT_BATCH)) === FAN_OUT_BATCH) {}
      const leaseSeconds = Math.ceil((2 * this.o.timeoutMs) / 1000) + 1;
      const due = await store.webhooks.claim(now, this.leaseToken, now + leaseSeconds, batch);
      if (due.length === 0) return;
      await Promise.all(due.map((d) => this.attempt(d)));
      if (due.length < batch) return;
    }
  }

  private async attempt(due: DueDelivery): Promise<void> {
    const sent = await this.o.sender.send(
      due.url,
      due.secret,
      { id: due.delivery.eventId, body: due.body },
      nowSeconds(this.o.clock),
    );
    const now = nowSeconds(this.o.clock);
    let result: DeliveryResult;
    let outcome: DeliveryOutcome;
    if (sent.delivered) {
      result = { status: 'delivered', nextAttemptAt: null, statusCode: sent.statusCode, error: null };
      outcome = 'delivered';
    } else {
      const delay = retryDelay(due.delivery.attempts + 1, this.o.random);
      result =
        delay === null
          ? { status: 'failed', nextAttemptAt: null, statusCode: sent.statusCode, error: sent.error }
          : { status: 'pending', nextAttemptAt: now + delay, statusCode: sent.statusCode, error: sent.error };
      outcome = delay === null ? 'failed' : 'retried';
      if (delay === null)
        this.o.log.warn(
          { delivery: due.delivery.id, endpoint: due.delivery.endpointId, error: sent.error },
          'webhook delivery failed for good after its last attempt (replayable)',
        );
    }
    // False when the lease ran out and another server took the delivery: its record stands.
    if (await this.o.store.webhooks.settle(due.delivery.id, this.leaseToken, result, now))
      this.o.onOutcome?.(outcome);
  }

  private async prune(now: number): Promise<void> {
    const ms = this.o.clock.now();
    if (ms - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = ms;
    await this.o.store.webhooks.prune(now - (this.o.retentionDays ?? 30) * 86_400);
  }
}
