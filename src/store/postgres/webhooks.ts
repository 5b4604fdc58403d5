/** @module PostgreSQL's webhooks: endpoints, the outbox of events, and leased deliveries (store.ts, WebhookStore). */
import type { AuditEntry } from '../../domain/audit.js';
import type { EpochSeconds } from '../../domain/clock.js';
import { newId } from '../../domain/ids.js';
import {
  eventBody,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEvent,
} from '../../domain/webhooks.js';
import type { DeliveryResult, DueDelivery, Page, WebhookStore } from '../store.js';
import {
  DELIVERY_SELECT,
  type DeliveryRow,
  DUE_COLUMNS,
  type DueRow,
  type EndpointRow,
  type EventRow,
  endpointValues,
  FAN_OUT_BATCH,
  fanOutRows,
  toDelivery,
  toDue,
  toEndpoint,
  toEvent,
} from '../webhook-rows.js';
import { queueAlertMails } from './alerts.js';
import { writeAudit } from './audit.js';
import { guard, type PgQueryable } from './driver.js';
import type { PgTransactions } from './transactions.js';

/** Inside the transaction of the change that caused them: the outbox rows of these events, in one statement. */
export async function recordEvents(events: readonly WebhookEvent[], db: PgQueryable): Promise<void> {
  if (events.length === 0) return;
  await db.query(
    `INSERT INTO webhook_events (id, type, account_id, body, created_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])`,
    [
      events.map((e) => e.id),
      events.map((e) => e.type),
      events.map((e) => e.accountId),
      events.map(eventBody),
      events.map((e) => e.at),
    ],
  );
}

export class PgWebhooks implements WebhookStore {
  constructor(private readonly t: PgTransactions) {}

  async addEndpoint(endpoint: WebhookEndpoint, secret: string, audit?: AuditEntry): Promise<void> {
    await this.t.tx(async (db) => {
      // An endpoint hears the events committed after it: those waiting are fanned out first, to the
      // endpoints there before it. FOR UPDATE waits for a server fanning some out now, so none of
      // those reaches the new endpoint either (that server read the endpoints before this one existed).
      const newDeliveryId = () => newId('whd', endpoint.createdAt * 1000);
      while ((await this.fanOutIn(db, endpoint.createdAt, newDeliveryId, FAN_OUT_BATCH, 'FOR UPDATE')) > 0) {}
      await db.query(
        'INSERT INTO webhook_endpoints (id, url, secret, account_id, events, thresholds, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        endpointValues(endpoint, secret),
      );
      await writeAudit(audit, db);
    });
  }

  async listEndpoints(): Promise<WebhookEndpoint[]> {
    return (await guard(() => this.t.all<EndpointRow>('SELECT * FROM webhook_endpoints ORDER BY id'))).map(
      toEndpoint,
    );
  }

  async getEndpoint(id: string): Promise<WebhookEndpoint | undefined> {
    const row = await guard(() =>
      this.t.one<EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1', [id]),
    );
    return row && toEndpoint(row);
  }

  removeEndpoint(id: string, audit?: AuditEntry): Promise<WebhookEndpoint | undefined> {
    return this.t.tx(async (db) => {
      await db.query('DELETE FROM webhook_deliveries WHERE endpoint_id = $1', [id]);
      const row = await this.t.one<EndpointRow>(
        'DELETE FROM webhook_endpoints WHERE id = $1 RETURNING *',
        [id],
        db,
      );
      if (!row) return undefined;
      await writeAudit(audit, db);
      return toEndpoint(row);
    });
  }

  fanOut(now: EpochSeconds, newDeliveryId: () => string, limit: number): Promise<number> {
    // SKIP LOCKED: servers fanning out at once take different events, none waits for another.
    return this.t.tx((db) => this.fanOutIn(db, now, newDeliveryId, limit, 'FOR UPDATE SKIP LOCKED'));
  }

  /** Fans out up to `limit` waiting events to the endpoints there now, in the caller's transaction. */
  private async fanOutIn(
    db: PgQueryable,
    now: EpochSeconds,
    newDeliveryId: () => string,
    limit: number,
    lock: 'FOR UPDATE' | 'FOR UPDATE SKIP LOCKED',
  ): Promise<number> {
    const events = await this.t.all<EventRow>(
      `SELECT * FROM webhook_events WHERE fanned_out = 0 ORDER BY id LIMIT $1 ${lock}`,
      [limit],
      db,
    );
    if (events.length === 0) return 0;
    const endpoints = (await this.t.all<EndpointRow>('SELECT * FROM webhook_endpoints', [], db)).map(
      toEndpoint,
    );
    const rows = fanOutRows(events, endpoints, newDeliveryId, now);
    if (rows.length > 0) {
      await db.query(
        `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempts, next_attempt_at, created_at, updated_at)
         SELECT id, endpoint_id, event_id, 'pending', 0, $4, $4, $4 FROM unnest($1::text[], $2::text[], $3::text[])
           AS v (id, endpoint_id, event_id)`,
        [rows.map((r) => r.id), rows.map((r) => r.endpointId), rows.map((r) => r.eventId), now],
      );
    }
    await queueAlertMails(db, events, now);
    await db.query('UPDATE webhook_events SET fanned_out = 1 WHERE id = ANY($1::text[])', [
      events.map((e) => e.id),
    ]);
    return events.length;
  }

  async claim(
    now: EpochSeconds,
    leaseToken: string,
    leaseUntil: EpochSeconds,
    limit: number,
  ): Promise<DueDelivery[]> {
    // FOR UPDATE SKIP LOCKED: servers claiming at once each take different deliveries, without waiting.
    const rows = await guard(() =>
      this.t.all<DueRow>(
        `WITH claimed AS (
           UPDATE webhook_deliveries SET lease_token = $1, lease_until = $2
            WHERE id IN (SELECT id FROM webhook_deliveries
                          WHERE status = 'pending' AND next_attempt_at <= $3 AND (lease_until IS NULL OR lease_until <= $3)
                          ORDER BY next_attempt_at, id LIMIT $4 FOR UPDATE SKIP LOCKED)
            RETURNING *
         )
         SELECT ${DUE_COLUMNS} FROM claimed d JOIN webhook_events e ON e.id = d.event_id
           JOIN webhook_endpoints p ON p.id = d.endpoint_id ORDER BY d.next_attempt_at, d.id`,
        [leaseToken, leaseUntil, now, limit],
      ),
    );
    return rows.map(toDue);
  }

  addLeasedDelivery(
    event: WebhookEvent,
    delivery: { id: string; endpointId: string },
    lease: { token: string; until: EpochSeconds },
    audit?: AuditEntry,
  ): Promise<DueDelivery | undefined> {
    return this.t.tx(async (db) => {
      // FOR SHARE: the endpoint cannot be removed between this check and the delivery's insert.
      const endpoint = await this.t.one(
        'SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR SHARE',
        [delivery.endpointId],
        db,
      );
      if (!endpoint) return undefined;
      await db.query(
        'INSERT INTO webhook_events (id, type, account_id, body, created_at, fanned_out) VALUES ($1, $2, $3, $4, $5, 1)',
        [event.id, event.type, event.accountId, eventBody(event), event.at],
      );
      await db.query(
        `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempts, next_attempt_at, lease_token, lease_until, created_at, updated_at)
         VALUES ($1, $2, $3, 'pending', 0, $4, $5, $6, $4, $4)`,
        [delivery.id, delivery.endpointId, event.id, event.at, lease.token, lease.until],
      );
      await writeAudit(audit, db);
      const row = await this.t.one<DueRow>(
        `SELECT ${DUE_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
           JOIN webhook_endpoints p ON p.id = d.endpoint_id WHERE d.id = $1`,
        [delivery.id],
        db,
      );
      return row && toDue(row);
    });
  }

  async settle(id: string, leaseToken: string, result: DeliveryResult, now: EpochSeconds): Promise<boolean> {
    const res = await guard(() =>
      this.t.all(
        `UPDATE webhook_deliveries SET status = $1, attempts = attempts + 1, next_attempt_at = $2,
           last_status_code = $3, last_error = $4, lease_token = NULL, lease_until = NULL, updated_at = $5
         WHERE id = $6 AND lease_token = $7 RETURNING id`,
        [result.status, result.nextAttemptAt, result.statusCode, result.error, now, id, leaseToken],
      ),
    );
    return res.length === 1;
  }

  async listDeliveries(endpointId: string, page: Page): Promise<WebhookDelivery[]> {
    return (
      await guard(() =>
        this.t.all<DeliveryRow>(
          `${DELIVERY_SELECT} WHERE d.endpoint_id = $1 AND d.id > $2 ORDER BY d.id LIMIT $3`,
          [endpointId, page.after ?? '', page.limit],
        ),
      )
    ).map(toDelivery);
  }

  async getDelivery(id: string): Promise<WebhookDelivery | undefined> {
    const row = await guard(() => this.t.one<DeliveryRow>(`${DELIVERY_SELECT} WHERE d.id = $1`, [id]));
    return row && toDelivery(row);
  }

  replay(id: string, now: EpochSeconds, audit?: AuditEntry): Promise<WebhookDelivery | undefined> {
    return this.t.tx(async (db) => {
      const changed = await this.t.all(
        `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = $1, lease_token = NULL,
           lease_until = NULL, updated_at = $1 WHERE id = $2 RETURNING id`,
        [now, id],
        db,
      );
      if (changed.length === 0) return undefined;
      await writeAudit(audit, db);
      const row = await this.t.one<DeliveryRow>(`${DELIVERY_SELECT} WHERE d.id = $1`, [id], db);
      return row && toDelivery(row);
    });
  }

  prune(before: EpochSeconds): Promise<number> {
    return this.t.tx(async (db) => {
      const gone = await this.t.all(
        `DELETE FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < $1 RETURNING id`,
        [before],
        db,
      );
      await db.query(
        `DELETE FROM webhook_events e WHERE fanned_out = 1 AND created_at < $1
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`,
        [before],
      );
      // Alert mails keep their event's body: they go on their own age, whatever became of them.
      await db.query('DELETE FROM alert_mails WHERE created_at < $1', [before]);
      return gone.length;
    });
  }

  async events(page: Page): Promise<WebhookEvent[]> {
    return (
      await guard(() =>
        this.t.all<EventRow>('SELECT * FROM webhook_events WHERE id > $1 ORDER BY id LIMIT $2', [
          page.after ?? '',
          page.limit,
        ]),
      )
    ).map(toEvent);
  }
}
