/**
 * @module PostgreSQL's money (store.payments). An event's id is claimed by its INSERT first: a
 * second server delivering the same event at once waits on that row until the first commits, then
 * finds it and changes nothing. The account's row is locked before its subscription is decided.
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
import { guard, type PgClient } from './driver.js';
import { applyLedger } from './ledger.js';
import type { PgTransactions } from './transactions.js';
import { recordEvents } from './webhooks.js';

const EVENT_INSERT =
  'INSERT INTO stripe_events (id, type, account_id, received_at, outcome, detail) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING RETURNING id';

export class PgPayments implements PaymentStore {
  constructor(private readonly t: PgTransactions) {}

  async listTopups(): Promise<Topup[]> {
    return guard(async () => (await this.t.all<TopupRow>('SELECT * FROM topups ORDER BY id')).map(toTopup));
  }

  async getTopup(id: string): Promise<Topup | undefined> {
    const row = await guard(() => this.t.one<TopupRow>('SELECT * FROM topups WHERE id = $1', [id]));
    return row && toTopup(row);
  }

  async priceUse(priceId: string): Promise<{ plan?: string; topup?: string }> {
    const row = await guard(() =>
      this.t.one<{ plan: string | null; topup: string | null }>(
        `SELECT (SELECT id FROM plans WHERE stripe_price = $1) AS plan,
                (SELECT id FROM topups WHERE stripe_price = $1) AS topup`,
        [priceId],
      ),
    );
    return { ...(row?.plan ? { plan: row.plan } : {}), ...(row?.topup ? { topup: row.topup } : {}) };
  }

  async putTopup(p: Topup, audit?: AuditEntry): Promise<void> {
    await this.t.tx(async (db) => {
      await db.query(
        `INSERT INTO topups (id, tokens, stripe_price, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (id) DO UPDATE SET tokens = excluded.tokens, stripe_price = excluded.stripe_price,
           updated_at = excluded.updated_at`,
        [p.id, p.tokens, p.stripePrice, p.createdAt, p.updatedAt],
      );
      await writeAudit(audit, db);
    });
  }

  removeTopup(id: string, audit?: AuditEntry): Promise<Topup | undefined> {
    return this.t.tx(async (db) => {
      const row = await this.t.one<TopupRow>('DELETE FROM topups WHERE id = $1 RETURNING *', [id], db);
      if (row) await writeAudit(audit, db);
      return row && toTopup(row);
    });
  }

  linkCustomer(accountId: string, customerId: string, audit?: AuditEntry): Promise<string | undefined> {
    return this.t.tx(
      async (db) => {
        const set = await db.query(
          'UPDATE accounts SET stripe_customer = $1 WHERE id = $2 AND stripe_customer IS NULL',
          [customerId, accountId],
        );
        if ((set.rowCount ?? 0) > 0) await writeAudit(audit, db);
        const row = await this.t.one<{ stripe_customer: string | null }>(
          'SELECT stripe_customer FROM accounts WHERE id = $1',
          [accountId],
          db,
        );
        return row?.stripe_customer ?? undefined;
      },
      () => [{ account: accountId }],
    );
  }

  async accountOfCustomer(customerId: string): Promise<string | undefined> {
    const row = await guard(() =>
      this.t.one<{ id: string }>('SELECT id FROM accounts WHERE stripe_customer = $1', [customerId]),
    );
    return row?.id;
  }

  async paymentOf(paymentIntent: string): Promise<PackPayment | undefined> {
    const row = await guard(() =>
      this.t.one<PaymentRow>('SELECT * FROM stripe_payments WHERE payment_intent = $1', [paymentIntent]),
    );
    return row && toPayment(row);
  }

  async seen(eventId: string): Promise<boolean> {
    return guard(
      async () => (await this.t.one('SELECT 1 FROM stripe_events WHERE id = $1', [eventId])) !== undefined,
    );
  }

  note(r: StripeEventRecord): Promise<boolean> {
    return this.t.tx(
      async (db) =>
        (await this.t.one(
          EVENT_INSERT,
          [r.id, r.type, r.accountId, r.receivedAt, r.outcome, r.detail],
          db,
        )) !== undefined,
    );
  }

  apply(change: PaymentChange, now: EpochSeconds): Promise<PaymentApplied> {
    return this.t.tx(
      (db) => this.applyIn(change, now, db),
      (r) => (r.kind === 'done' && r.outcome === 'applied' ? [{ account: change.accountId }] : []),
    );
  }

  private async applyIn(change: PaymentChange, now: EpochSeconds, db: PgClient): Promise<PaymentApplied> {
    const { event } = change;
    if (event) {
      const claimed = await this.t.one(
        EVENT_INSERT,
        [event.id, event.type, change.accountId, event.receivedAt, 'applied', ''],
        db,
      );
      if (!claimed) return { kind: 'duplicate' };
    }
    // The account's row first, as every write that moves its balance locks it.
    const before = await this.t.one<AccountRow>(
      'SELECT * FROM accounts WHERE id = $1 FOR UPDATE',
      [change.accountId],
      db,
    );
    const notes: string[] = [];
    let changed = false;
    if (change.grant) {
      const { entry, payment, note, audit } = change.grant;
      const outcome = await this.ledger(entry, db);
      notes.push(grantNote(outcome, note));
      if (outcome.kind === 'applied') {
        changed = true;
        await writeAudit(audit, db);
        if (payment)
          await db.query(
            'INSERT INTO stripe_payments (payment_intent, session_id, account_id, topup_id, tokens, created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING',
            [
              payment.paymentIntent,
              payment.sessionId,
              payment.accountId,
              payment.topupId,
              payment.tokens,
              now,
            ],
          );
      }
    }
    if (change.takeBack) {
      const { entry, note, audit } = change.takeBack;
      const balance = await this.t.one<{ token_balance: string | number }>(
        'SELECT token_balance FROM accounts WHERE id = $1',
        [change.accountId],
        db,
      );
      const amount = Math.min(Number(balance?.token_balance ?? 0), -entry.amount);
      const outcome: LedgerOutcome =
        amount > 0
          ? await this.ledger({ ...entry, amount: -amount }, db)
          : { kind: 'insufficient', balance: 0 };
      notes.push(takeBackNote(outcome, note, amount));
      if (outcome.kind === 'applied') {
        changed = true;
        await writeAudit({ ...audit, details: { ...audit.details, amount: -amount } }, db);
      }
    }
    if (change.subscription) changed = (await this.subscription(change, before, now, notes, db)) || changed;
    const detail = notes.join('; ');
    const outcome = changed ? 'applied' : 'no_effect';
    if (event)
      await db.query('UPDATE stripe_events SET outcome = $1, detail = $2 WHERE id = $3', [
        outcome,
        detail,
        event.id,
      ]);
    return { kind: 'done', outcome, detail };
  }

  private async ledger(entry: LedgerAppend, db: PgClient): Promise<LedgerOutcome> {
    try {
      return await applyLedger(this.t, entry, db);
    } catch (err) {
      // applyLedger refuses after a conditional UPDATE that matched nothing: the transaction goes on.
      if (err instanceof Rollback) return err.outcome as LedgerOutcome;
      throw err;
    }
  }

  private async subscription(
    change: PaymentChange,
    before: AccountRow | undefined,
    now: EpochSeconds,
    notes: string[],
    db: PgClient,
  ): Promise<boolean> {
    if (!before) {
      notes.push(`no account ${change.accountId}`);
      return false;
    }
    // The row as the grants above left it: only the subscription's columns and status are decided from it.
    const decision = decideSubscription(before, change.subscription!, now);
    notes.push(decision.note);
    if (!decision.apply) return false;
    const c = decision.columns;
    await db.query(
      `UPDATE accounts SET stripe_subscription = $1, subscription_status = $2, stripe_price = $3, period_start = $4,
         period_end = $5, stripe_state_at = $6, plan_id = $7, plan_since = $8, status = $9,
         suspended_for_payment = $10, updated_at = $11 WHERE id = $12`,
      [...subscriptionValues(c), c.suspendedForPayment, now, change.accountId],
    );
    if (c.accountStatus !== decision.previousStatus)
      await recordEvents(
        [statusChanged(change.accountId, now, decision.previousStatus, c.accountStatus)],
        db,
      );
    if (decision.visible) await writeAudit(change.subscription!.audit, db);
    return decision.visible;
  }

  async events(accountId: string | null, limit: number): Promise<StripeEventRecord[]> {
    return guard(async () =>
      (accountId === null
        ? await this.t.all<EventRow>(
            'SELECT * FROM stripe_events WHERE account_id IS NULL ORDER BY received_at DESC, id DESC LIMIT $1',
            [limit],
          )
        : await this.t.all<EventRow>(
            'SELECT * FROM stripe_events WHERE account_id = $1 ORDER BY received_at DESC, id DESC LIMIT $2',
            [accountId, limit],
          )
      ).map(toEventRecord),
    );
  }
}
