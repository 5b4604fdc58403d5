/**
 * @module The customer alert mailer, one per server beside the webhook dispatcher: leases the alert
 * mails the fan-out queued (one server at a time per mail, however many run), has each written and
 * sent through the port the console implements, and records the attempt: sent, due again after a
 * delay, or failed once the schedule is spent. It runs beside the requests, never in them: a slow or
 * dead mail server costs a request nothing. A server killed mid-send leaves its lease to run out;
 * the mail is then taken by another server, or by this one after its restart.
 */
import { randomBytes } from 'node:crypto';
import { ALERT_STALE_SECONDS, alertRetryDelay, type CustomerAlert } from '../domain/alerts.js';
import { type Clock, nowSeconds } from '../domain/clock.js';
import type { AlertMailResult, DueAlertMail, Store } from '../store/store.js';

/** Writes and sends one alert mail (the console's mailer does); a throw is a failed attempt. */
export interface AlertMailPort {
  send(alert: CustomerAlert): Promise<void>;
}

export interface AlertMailerOptions {
  store: Pick<Store, 'alerts'>;
  mail: AlertMailPort;
  clock: Clock;
  /** How long one mail may take to hand over: a lease lasts twice that, so it never runs out mid-send. */
  timeoutMs?: number;
  /** How often to look for mails due (other servers' fan-outs too). */
  pollMs?: number;
  /** Mails sent at once by this server. */
  batch?: number;
  log: { warn(fields: object, message: string): void; info(fields: object, message: string): void };
}

export class AlertMailer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private failing = false;
  /** This server's leases: only its own can settle what it claimed. */
  private readonly leaseToken = randomBytes(12).toString('base64url');

  constructor(private readonly o: AlertMailerOptions) {}

  start(): void {
    this.schedule();
  }

  /** Stops polling and waits for the mails under way (each bounded by the timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass: send what is due until nothing is; resolves when done (tests await it). */
  async runOnce(): Promise<void> {
    while (this.running) await this.running;
    clearTimeout(this.timer);
    this.running = this.run();
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running ??= this.run();
    }, this.o.pollMs ?? 1_000);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    try {
      await this.pass();
      if (this.failing) this.o.log.info({}, 'alert mailer: the store answers again');
      this.failing = false;
    } catch (err) {
      // Logged once per outage, not once per poll.
      if (!this.failing)
        this.o.log.warn({ err: (err as Error).message }, 'alert mailer: the store failed; retrying');
      this.failing = true;
    } finally {
      this.running = undefined;
      this.schedule();
    }
  }

  private get timeoutMs(): number {
    return this.o.timeoutMs ?? 30_000;
  }

  private async pass(): Promise<void> {
    const batch = this.o.batch ?? 8;
    while (!this.stopped) {
      const now = nowSeconds(this.o.clock);
      const leaseUntil = now + Math.ceil((2 * this.timeoutMs) / 1000) + 1;
      const due = await this.o.store.alerts.claim(
        now,
        this.leaseToken,
        leaseUntil,
        batch,
        now - ALERT_STALE_SECONDS,
      );
      await Promise.all(due.map((d) => this.attempt(d)));
      if (due.length < batch) return;
    }
  }

  private async attempt(due: DueAlertMail): Promise<void> {
    let error: string | null = null;
    try {
      await withTimeout(this.o.mail.send(due.alert), this.timeoutMs);
    } catch (err) {
      error = (err as Error).message.slice(0, 500);
    }
    const now = nowSeconds(this.o.clock);
    let result: AlertMailResult;
    if (error === null) result = { status: 'sent', nextAttemptAt: null, error: null };
    else {
      const delay = alertRetryDelay(due.attempts + 1);
      result =
        delay === null
          ? { status: 'failed', nextAttemptAt: null, error }
          : { status: 'pending', nextAttemptAt: now + delay, error };
      this.o.log.warn(
        { alert: due.alert.id, account: due.alert.accountId, error, retry: delay !== null },
        delay === null
          ? 'alert mail failed for good after its last attempt'
          : 'alert mail not sent; retrying',
      );
    }
    // False when the lease ran out and another server took the mail: its record stands.
    await this.o.store.alerts.settle(due.alert.id, this.leaseToken, result, now);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from the mail server within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
