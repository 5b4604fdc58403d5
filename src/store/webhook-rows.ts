/** @module The webhook tables' rows (migration 006) and what both stores make of them. */
import type { EpochSeconds } from '../domain/clock.js';
import {
  type AnyEventType,
  type DeliveryStatus,
  type EventType,
  endpointWants,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEvent,
} from '../domain/webhooks.js';
import type { DueDelivery } from './store.js';

export interface EndpointRow {
  id: string;
  url: string;
  secret: string;
  account_id: string | null;
  events: string;
  thresholds: string;
  created_at: number | string;
}

export interface EventRow {
  id: string;
  type: string;
  account_id: string | null;
  body: string;
  created_at: number | string;
}

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  type: string;
  status: string;
  attempts: number | string;
  next_attempt_at: number | string | null;
  last_status_code: number | string | null;
  last_error: string | null;
  created_at: number | string;
  updated_at: number | string;
}

/** A delivery's columns with its event's type, for the reads that show deliveries. */
export const DELIVERY_SELECT = `SELECT d.id, d.endpoint_id, d.event_id, e.type, d.status, d.attempts, d.next_attempt_at,
  d.last_status_code, d.last_error, d.created_at, d.updated_at
  FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id`;

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

export const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  url: r.url,
  accountId: r.account_id,
  events: r.events.split(',') as EventType[],
  thresholds: r.thresholds.split(',').map(Number),
  createdAt: Number(r.created_at),
});

export const endpointValues = (e: WebhookEndpoint, secret: string) => [
  e.id,
  e.url,
  secret,
  e.accountId,
  e.events.join(','),
  e.thresholds.join(','),
  e.createdAt,
];

export const toDelivery = (r: DeliveryRow): WebhookDelivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  type: r.type as AnyEventType,
  status: r.status as DeliveryStatus,
  attempts: Number(r.attempts),
  nextAttemptAt: num(r.next_attempt_at),
  lastStatusCode: num(r.last_status_code),
  lastError: r.last_error,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

export function toEvent(r: EventRow): WebhookEvent {
  const body = JSON.parse(r.body) as { data: Record<string, unknown> };
  return {
    id: r.id,
    type: r.type as AnyEventType,
    accountId: r.account_id,
    at: Number(r.created_at),
    data: body.data,
  };
}

/** How many waiting events one statement fans out. */
export const FAN_OUT_BATCH = 200;

/** The deliveries to make of these events: one per event and endpoint that wants it. */
export function fanOutRows(
  events: readonly EventRow[],
  endpoints: readonly WebhookEndpoint[],
  newDeliveryId: () => string,
  now: EpochSeconds,
): { id: string; endpointId: string; eventId: string; now: EpochSeconds }[] {
  const rows: { id: string; endpointId: string; eventId: string; now: EpochSeconds }[] = [];
  for (const row of events) {
    const event = toEvent(row);
    for (const endpoint of endpoints) {
      // Only events committed after the endpoint reach it, however late the fan-out runs: adding an
      // endpoint fans out the events waiting, to the endpoints there before it, first.
      if (endpointWants(endpoint, event))
        rows.push({ id: newDeliveryId(), endpointId: endpoint.id, eventId: row.id, now });
    }
  }
  return rows;
}

/** What a due delivery is sent with: its row, its endpoint's address and secret, its event's body. */
export const DUE_COLUMNS = `d.id, d.endpoint_id, d.event_id, e.type, d.status, d.attempts, d.next_attempt_at,
  d.last_status_code, d.last_error, d.created_at, d.updated_at, p.url, p.secret, e.body, e.created_at AS event_at`;

export type DueRow = DeliveryRow & { url: string; secret: string; body: string; event_at: number | string };

export const toDue = (r: DueRow): DueDelivery => ({
  delivery: toDelivery(r),
  url: r.url,
  secret: r.secret,
  body: r.body,
  eventAt: Number(r.event_at),
});
