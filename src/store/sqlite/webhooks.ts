/** @module SQLite's webhooks: endpoints, the outbox of events, and leased deliveries (store.ts, WebhookStore). */

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
import type { SqliteExecutor } from './executor.js';

/** Inside the transaction of the change that caused them: the outbox rows of these events. */
export function recordEvents(x: SqliteExecutor, events: readonly WebhookEvent[]): void {
  for (const e of events) {
    x.sql('INSERT INTO webhook_events (id, type, account_id, body, created_at) VALUES (?, ?, ?, ?, ?)').run(
      e.id,
      e.type,
      e.accountId,
      eventBody(e),
      e.at,
    );
  }
}

export class SqliteWebhooks implements WebhookStore {
  constructor(private readonly x: SqliteExecutor) {}

  addEndpoint(endpoint: WebhookEndpoint, secret: string, audit?: AuditEntry): Promise<void> {
    return this.x.writeTx(() => {
      // An endpoint hears the events committed after it: those waiting are fanned out first, to the
      // endpoints there before it (one writer at a time: no fan-out runs meanwhile).
      const newDeliveryId = () => newId('whd', endpoint.createdAt * 1000);
      while (this.fanOutIn(endpoint.createdAt, newDeliveryId, FAN_OUT_BATCH) > 0) {}
      this.x
        .sql(
          'INSERT INTO webhook_endpoints (id, url, secret, account_id, events, thresholds, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        )
        .run(...endpointValues(endpoint, secret));
      writeAudit(this.x, audit);
    });
  }

  listEndpoints(): Promise<WebhookEndpoint[]> {
    return this.x.attempt(() =>
      (this.x.sql('SELECT * FROM webhook_endpoints ORDER BY id').all() as EndpointRow[]).map(toEndpoint),
    );
  }

  async getEndpoint(id: string): Promise<WebhookEndpoint | undefined> {
    const row = await this.x.attempt(
      () => this.x.sql('SELECT * FROM webhook_endpoints WHERE id = ?').get(id) as EndpointRow | undefined,
    );
    return row && toEndpoint(row);
  }

  removeEndpoint(id: string, audit?: AuditEntry): Promise<WebhookEndpoint | undefined> {
    return this.x.writeTx(() => {
      this.x.sql('DELETE FROM webhook_deliveries WHERE endpoint_id = ?').run(id);
      const row = this.x.sql('DELETE FROM webhook_endpoints WHERE id = ? RETURNING *').get(id) as
        | EndpointRow
        | undefined;
      if (!row) return undefined;
      writeAudit(this.x, audit);
      return toEndpoint(row);
    });
  }

  fanOut(now: EpochSeconds, newDeliveryId: () => string, limit: number): Promise<number> {
    return this.x.writeTx(() => this.fanOutIn(now, newDeliveryId, limit));
  }

  /** Fans out up to `limit` waiting events to the endpoints there now, in the caller's transaction. */
  private fanOutIn(now: EpochSeconds, newDeliveryId: () => string, limit: number): number {
    const events = this.x
      .sql('SELECT * FROM webhook_events WHERE fanned_out = 0 ORDER BY id LIMIT ?')
      .all(limit) as EventRow[];
    if (events.length === 0) return 0;
    const endpoints = (this.x.sql('SELECT * FROM webhook_endpoints').all() as EndpointRow[]).map(toEndpoint);
    for (const d of fanOutRows(events, endpoints, newDeliveryId, now)) {
      this.x
        .sql(
          `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempts, next_attempt_at, created_at, updated_at)
           VALUES (?, ?, ?, 'pending', 0, ?, ?, ?)`,
        )
        .run(d.id, d.endpointId, d.eventId, now, now, now);
    }
    queueAlertMails(this.x, events, now);
    const mark = this.x.sql('UPDATE webhook_events SET fanned_out = 1 WHERE id = ?');
    for (const e of events) mark.run(e.id);
    return events.length;
  }

  claim(
    now: EpochSeconds,
    leaseToken: string,
    leaseUntil: EpochSeconds,
    limit: number,
  ): Promise<DueDelivery[]> {
    // One writer at a time: the claiming UPDATE cannot hand a delivery to two callers.
    return this.x.writeTx(() => {
      const rows = this.x
        .sql(
          `UPDATE webhook_deliveries SET lease_token = ?, lease_until = ?
            WHERE id IN (SELECT id FROM webhook_deliveries
                          WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
                          ORDER BY next_attempt_at, id LIMIT ?)
            RETURNING id`,
        )
        .all(leaseToken, leaseUntil, now, now, limit) as { id: string }[];
      const due = this.x.sql(
        `SELECT ${DUE_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
           JOIN webhook_endpoints p ON p.id = d.endpoint_id WHERE d.id = ?`,
      );
      return rows.map((r) => toDue(due.get(r.id) as DueRow));
    });
  }

  addLeasedDelivery(
    event: WebhookEvent,
    delivery: { id: string; endpointId: string },
    lease: { token: string; until: EpochSeconds },
    audit?: AuditEntry,
  ): Promise<DueDelivery | undefined> {
    return this.x.writeTx(() => {
      if (!this.x.sql('SELECT 1 FROM webhook_endpoints WHERE id = ?').get(delivery.endpointId))
        return undefined;
      this.x
        .sql(
          'INSERT INTO webhook_events (id, type, account_id, body, created_at, fanned_out) VALUES (?, ?, ?, ?, ?, 1)',
        )
        .run(event.id, event.type, event.accountId, eventBody(event), event.at);
      this.x
        .sql(
          `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempts, next_attempt_at, lease_token, lease_until, created_at, updated_at)
           VALUES (?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?)`,
        )
        .run(
          delivery.id,
          delivery.endpointId,
          event.id,
          event.at,
          lease.token,
          lease.until,
          event.at,
          event.at,
        );
      writeAudit(this.x, audit);
      return toDue(
        this.x
          .sql(
            `SELECT ${DUE_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
               JOIN webhook_endpoints p ON p.id = d.endpoint_id WHERE d.id = ?`,
          )
          .get(delivery.id) as DueRow,
      );
    });
  }

  settle(id: string, leaseToken: string, result: DeliveryResult, now: EpochSeconds): Promise<boolean> {
    return this.x.writeTx(
      () =>
        this.x
          .sql(
            `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, next_attempt_at = ?,
               last_status_code = ?, last_error = ?, lease_token = NULL, lease_until = NULL, updated_at = ?
             WHERE id = ? AND lease_token = ?`,
          )
          .run(result.status, result.nextAttemptAt, result.statusCode, result.error, now, id, leaseToken)
          .changes === 1,
    );
  }

  listDeliveries(endpointId: string, page: Page): Promise<WebhookDelivery[]> {
    return this.x.attempt(() =>
      (
        this.x
          .sql(`${DELIVERY_SELECT} WHERE d.endpoint_id = ? AND d.id > ? ORDER BY d.id LIMIT ?`)
          .all(endpointId, page.after ?? '', page.limit) as DeliveryRow[]
      ).map(toDelivery),
    );
  }

  async getDelivery(id: string): Promise<WebhookDelivery | undefined> {
    const row = await this.x.attempt(
      () => this.x.sql(`${DELIVERY_SELECT} WHERE d.id = ?`).get(id) as DeliveryRow | undefined,
    );
    return row && toDelivery(row);
  }

  replay(id: string, now: EpochSeconds, audit?: AuditEntry): Promise<WebhookDelivery | undefined> {
    return this.x.writeTx(() => {
      const changed = this.x
        .sql(
          `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?, lease_token = NULL,
             lease_until = NULL, updated_at = ? WHERE id = ?`,
        )
        .run(now, now, id).changes;
      if (changed === 0) return undefined;
      writeAudit(this.x, audit);
      return toDelivery(this.x.sql(`${DELIVERY_SELECT} WHERE d.id = ?`).get(id) as DeliveryRow);
    });
  }

  prune(before: EpochSeconds): Promise<number> {
    return this.x.writeTx(() => {
      const n = this.x
        .sql(`DELETE FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < ?`)
        .run(before).changes;
      this.x
        .sql(
          `DELETE FROM webhook_events WHERE fanned_out = 1 AND created_at < ?
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`,
        )
        .run(before);
      // Alert mails keep their event's body: they go on their own age, whatever became of them.
      this.x.sql('DELETE FROM alert_mails WHERE created_at < ?').run(before);
      return n;
    });
  }

  events(page: Page): Promise<WebhookEvent[]> {
    return this.x.attempt(() =>
      (
        this.x
          .sql('SELECT * FROM webhook_events WHERE id > ? ORDER BY id LIMIT ?')
          .all(page.after ?? '', page.limit) as EventRow[]
      ).map(toEvent),
    );
  }
}
