/**
 * @module SQLite's money (store.payments): packs, customers, and each Stripe event applied with its
 * effect in one IMMEDIATE transaction, its id claimed first so that no second delivery applies it.
 */
import type { AuditEntry } from '../../domain/audit.js';
import type { EpochSeconds } from '../../domain/clock.js';
import type { Topup } from '../../domain/payments.js';
import { statusChanged } from '../../domain/webhooks.js';
import type { LedgerAppend, LedgerOutcome } from '../ledger-store.js';
import {
  decideSubscription,
  type EventRow,
  grantNote,
  type PaymentRow,
  subscriptionValues,
  type TopupRow,
  takeBackNote,
  toEventRecord,
  toPayment,
  toTopup,
} from '../payment-rows.js';
import type {
  PackPayment,
  PaymentApplied,
  PaymentChange,
  PaymentStore,
  StripeEventRecord,
} from '../payments-store.js';
import { Rollback } from '../rollback.js';
import type { AccountRow } from '../rows.js';
import { writeAudit } from './audit.js';
import type { SqliteExecutor } from './executor.js';
import { applyLedger } from './ledger.js';
import { recordEvents } from './webhooks.js';

const EVENT_INSERT =
  'INSERT INTO stripe_events (id, type, account_id, received_at, outcome, detail) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING';

export class SqlitePayments implements PaymentStore {
  constructor(private readonly x: SqliteExecutor) {}

  listTopups(): Promise<Topup[]> {
    return this.x.attempt(() =>
      (this.x.sql('SELECT * FROM topups ORDER BY id').all() as TopupRow[]).map(toTopup),
    );
  }

  async getTopup(id: string): Promise<Topup | undefined> {
    const row = await this.x.attempt(
      () => this.x.sql('SELECT * FROM topups WHERE id = ?').get(id) as TopupRow | undefined,
    );
    return row && toTopup(row);
  }

  priceUse(priceId: string): Promise<{ plan?: string; topup?: string }> {
    return this.x.attempt(() => {
      const plan = this.x.sql('SELECT id FROM plans WHERE stripe_price = ?').get(priceId) as
        | { id: string }
        | undefined;
      const topup = this.x.sql('SELECT id FROM topups WHERE stripe_price = ?').get(priceId) as
        | { id: string }
        | undefined;
      return { ...(plan ? { plan: plan.id } : {}), ...(topup ? { topup: topup.id } : {}) };
    });
  }

  async putTopup(t: Topup, audit?: AuditEntry): Promise<void> {
    await this.x.writeTx(() => {
      this.x
        .sql(
          `INSERT INTO topups (id, tokens, stripe_price, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET tokens = excluded.tokens, stripe_price = excluded.stripe_price,
             updated_at = excluded.updated_at`,
        )
        .run(t.id, t.tokens, t.stripePrice, t.createdAt, t.updatedAt);
      writeAudit(this.x, audit);
    });
  }

  removeTopup(id: string, audit?: AuditEntry): Promise<Topup | undefined> {
    return this.x.writeTx(() => {
      const row = this.x.sql('DELETE FROM topups WHERE id = ? RETURNING *').get(id) as TopupRow | undefined;
      if (row) writeAudit(this.x, audit);
      return row && toTopup(row);
    });
  }

  linkCustomer(accountId: string, customerId: string, audit?: AuditEntry): Promise<string | undefined> {
    return this.x.writeTx(
      () => {
        const set = this.x
          .sql('UPDATE accounts SET stripe_customer = ? WHERE id = ? AND stripe_customer IS NULL')
          .run(customerId, accountId);
        if (set.changes > 0) writeAudit(this.x, audit);
        const row = this.x.sql('SELECT stripe_customer FROM accounts WHERE id = ?').get(accountId) as
          | { stripe_customer: string | null }
          | undefined;
        return row?.stripe_customer ?? undefined;
      },
      () => [{ account: accountId }],
    );
  }

  async accountOfCustomer(customerId: string): Promise<string | undefined> {
    const row = await this.x.attempt(
      () =>
        this.x.sql('SELECT id FROM accounts WHERE stripe_customer = ?').get(customerId) as
          | { id: string }
          | undefined,
    );
    return row?.id;
  }

  async paymentOf(paymentIntent: string): Promise<PackPayment | undefined> {
    const row = await this.x.attempt(
      () =>
        this.x.sql('SELECT * FROM stripe_payments WHERE payment_intent = ?').get(paymentIntent) as
          | PaymentRow
          | undefined,
    );
    return row && toPayment(row);
  }

  seen(eventId: string): Promise<boolean> {
    return this.x.attempt(
      () => this.x.sql('SELECT 1 FROM stripe_events WHERE id = ?').get(eventId) !== undefined,
    );
  }

  note(r: StripeEventRecord): Promise<boolean> {
    return this.x.writeTx(
      () =>
        this.x.sql(EVENT_INSERT).run(r.id, r.type, r.accountId, r.receivedAt, r.outcome, r.detail).changes >
        0,
    );
  }

  apply(change: PaymentChange, now: EpochSeconds): Promise<PaymentApplied> {
    return this.x.writeTx(
      () => this.applyIn(change, now),
      (r) => (r?.kind === 'done' && r.outcome === 'applied' ? [{ account: change.accountId }] : []),
    );
  }

  private applyIn(change: PaymentChange, now: EpochSeconds): PaymentApplied {
    const { event } = change;
    // The id first: of two deliveries of one event, the second finds it and changes nothing.
    if (
      event &&
      this.x.sql(EVENT_INSERT).run(event.id, event.type, change.accountId, event.receivedAt, 'applied', '')
        .changes === 0
    )
      return { kind: 'duplicate' };
    const notes: string[] = [];
    let changed = false;
    if (change.grant) {
      const { entry, payment, note, audit } = change.grant;
      const outcome = this.ledger(entry);
      notes.push(grantNote(outcome, note));
      if (outcome.kind === 'applied') {
        changed = true;
        writeAudit(this.x, audit);
        if (payment)
          this.x
            .sql(
              'INSERT INTO stripe_payments (payment_intent, session_id, account_id, topup_id, tokens, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
            )
            .run(
              payment.paymentIntent,
              payment.sessionId,
              payment.accountId,
              payment.topupId,
              payment.tokens,
              now,
            );
      }
    }
    if (change.takeBack) {
      const { entry, note, audit } = change.takeBack;
      const balance = this.x.sql('SELECT token_balance FROM accounts WHERE id = ?').get(change.accountId) as
        | { token_balance: number }
        | undefined;
      const amount = Math.min(balance?.token_balance ?? 0, -entry.amount);
      const outcome: LedgerOutcome =
        amount > 0 ? this.ledger({ ...entry, amount: -amount }) : { kind: 'insufficient', balance: 0 };
      notes.push(takeBackNote(outcome, note, amount));
      if (outcome.kind === 'applied') {
        changed = true;
        writeAudit(this.x, { ...audit, details: { ...audit.details, amount: -amount } });
      }
    }
    if (change.subscription) changed = this.subscription(change, now, notes) || changed;
    const detail = notes.join('; ');
    const outcome = changed ? 'applied' : 'no_effect';
    if (event)
      this.x
        .sql('UPDATE stripe_events SET outcome = ?, detail = ? WHERE id = ?')
        .run(outcome, detail, event.id);
    return { kind: 'done', outcome, detail };
  }

  /** A ledger move inside the transaction; a refusal is an outcome here, not a rollback of the event. */
  private ledger(entry: LedgerAppend): LedgerOutcome {
    try {
      return applyLedger(this.x, entry);
    } catch (err) {
      // applyLedger refuses before it writes anything: the transaction goes on.
      if (err instanceof Rollback) return err.outcome as LedgerOutcome;
      throw err;
    }
  }

  private subscription(change: PaymentChange, now: EpochSeconds, notes: string[]): boolean {
    const sub = change.subscription!;
    const before = this.x.sql('SELECT * FROM accounts WHERE id = ?').get(change.accountId) as
      | AccountRow
      | undefined;
    if (!before) {
      notes.push(`no account ${change.accountId}`);
      return false;
    }
    const decision = decideSubscription(before, sub, now);
    notes.push(decision.note);
    if (!decision.apply) return false;
    const c = decision.columns;
    this.x
      .sql(
        `UPDATE accounts SET stripe_subscription = ?, subscription_status = ?, stripe_price = ?, period_start = ?,
           period_end = ?, stripe_state_at = ?, plan_id = ?, plan_since = ?, status = ?,
           suspended_for_payment = ?, updated_at = ? WHERE id = ?`,
      )
      .run(...subscriptionValues(c), c.suspendedForPayment ? 1 : 0, now, change.accountId);
    if (c.accountStatus !== decision.previousStatus)
      recordEvents(this.x, [statusChanged(change.accountId, now, decision.previousStatus, c.accountStatus)]);
    if (decision.visible) writeAudit(this.x, sub.audit);
    return decision.visible;
  }

  events(accountId: string | null, limit: number): Promise<StripeEventRecord[]> {
    return this.x.attempt(() =>
      (
        (accountId === null
          ? this.x
              .sql(
                'SELECT * FROM stripe_events WHERE account_id IS NULL ORDER BY received_at DESC, id DESC LIMIT ?',
              )
              .all(limit)
          : this.x
              .sql(
                'SELECT * FROM stripe_events WHERE account_id = ? ORDER BY received_at DESC, id DESC LIMIT ?',
              )
              .all(accountId, limit)) as EventRow[]
      ).map(toEventRecord),
    );
  }
}
