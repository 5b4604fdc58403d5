/**
 * @module Alerts as signed webhooks: the events, an endpoint's subscription, when an event is due
 * (once per crossing, decided from the values a transaction wrote), the body every delivery of an
 * event carries, and the retry schedule. Sending and signing live in src/webhooks.
 */
import { type EpochSeconds, isoSeconds } from './clock.js';
import { fail, ok, type Result } from './errors.js';
import type { Increment, WindowState } from './fair-use.js';
import { newId } from './ids.js';

export const EVENT_TYPES = [
  'fair_use.threshold',
  'tokens.low_balance',
  'tokens.depleted',
  'key.created',
  'key.revoked',
  'account.status_changed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The event `toolgate webhooks test` sends to one endpoint, whatever it subscribes to: recorded with
 * its one delivery, never fanned out, so no endpoint can subscribe to it.
 */
export const TEST_EVENT = 'webhook.test';
/** Every type an event or a delivery may have. */
export type AnyEventType = EventType | typeof TEST_EVENT;

/** What an endpoint gets when it names no thresholds. */
export const DEFAULT_THRESHOLDS: readonly number[] = [80, 100];

/** One event, as the transaction that caused it records it (the outbox). */
export interface WebhookEvent {
  /** `msg_…`: the `webhook-id` of every delivery of it, stable across retries and replays. */
  id: string;
  type: AnyEventType;
  accountId: string | null;
  at: EpochSeconds;
  data: Record<string, unknown>;
}

export interface WebhookEndpoint {
  id: string;
  url: string;
  /** Null: every account's events. */
  accountId: string | null;
  events: EventType[];
  /** Percentages of a window's limit that fire `fair_use.threshold`, ascending. */
  thresholds: number[];
  createdAt: EpochSeconds;
}

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface WebhookDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  type: AnyEventType;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: EpochSeconds | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: EpochSeconds;
  updatedAt: EpochSeconds;
}

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/** The endpoint as asked for (the CLI's and the admin API's words). */
export interface EndpointInput {
  url?: unknown;
  events?: unknown;
  thresholds?: unknown;
}

/** A URL, events and thresholds checked; each problem named. The address check is the sender's. */
export function validateEndpoint(
  input: EndpointInput,
): Result<{ url: string; events: EventType[]; thresholds: number[] }> {
  if (typeof input.url !== 'string' || input.url.length === 0)
    return fail('invalid_arguments', 'url is required: the http:// or https:// address to deliver to.');
  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    return fail('invalid_arguments', `url is not a URL: ${JSON.stringify(input.url.slice(0, 200))}.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return fail('invalid_arguments', `url must be http:// or https://, not ${url.protocol}//.`);
  if (url.username || url.password)
    return fail('invalid_arguments', 'url must not carry credentials; the signature authenticates toolgate.');
  if (input.url.length > 2000) return fail('invalid_arguments', 'url must be at most 2000 characters.');

  let events: EventType[] = [...EVENT_TYPES];
  if (input.events !== undefined) {
    if (!Array.isArray(input.events) || input.events.length === 0)
      return fail('invalid_arguments', `events must be a non-empty list of: ${EVENT_TYPES.join(', ')}.`);
    const unknown = input.events.filter((e) => typeof e !== 'string' || !isEventType(e));
    if (unknown.length > 0)
      return fail(
        'invalid_arguments',
        `unknown event ${unknown.map((e) => JSON.stringify(e)).join(', ')}; events are ${EVENT_TYPES.join(', ')}.`,
      );
    events = [...new Set(input.events as EventType[])];
  }

  let thresholds = [...DEFAULT_THRESHOLDS];
  if (input.thresholds !== undefined) {
    if (!Array.isArray(input.thresholds) || input.thresholds.length === 0)
      return fail(
        'invalid_arguments',
        'thresholds must be a non-empty list of whole percentages from 1 to 100.',
      );
    const bad = input.thresholds.filter(
      (t) => !Number.isInteger(t) || (t as number) < 1 || (t as number) > 100,
    );
    if (bad.length > 0)
      return fail(
        'invalid_arguments',
        `thresholds must be whole percentages from 1 to 100, not ${bad.map((t) => JSON.stringify(t)).join(', ')}.`,
      );
    thresholds = [...new Set(input.thresholds as number[])].sort((a, b) => a - b);
  }
  return ok({ url: url.toString(), events, thresholds });
}

/** Whether the endpoint wants this event (its account's or any, its types, its thresholds). */
export function endpointWants(endpoint: WebhookEndpoint, event: WebhookEvent): boolean {
  if (endpoint.accountId !== null && endpoint.accountId !== event.accountId) return false;
  if (event.type === TEST_EVENT || !endpoint.events.includes(event.type)) return false;
  if (event.type === 'fair_use.threshold')
    return endpoint.thresholds.includes(event.data.threshold as number);
  return true;
}

/** A new event's id and time, made by whoever records it. */
export type EventStamp = () => { id: string; at: EpochSeconds };

/**
 * The thresholds each window of a consumption crossed: `t` is crossed when the window's use goes
 * from below t% of its limit to t% or more. `before` is the use in the window's current run before
 * this consumption (0 when the consumption started it), `after` what it wrote; as windows only grow
 * within a run, and each consumption adds to the row it locked, every crossing belongs to exactly
 * one consumption. `thresholds` (ascending) are those some endpoint wants for this account.
 */
export function thresholdEvents(
  accountId: string,
  increments: readonly Increment[],
  usedBefore: (inc: Increment) => number,
  after: readonly WindowState[],
  thresholds: readonly number[],
  stamp: EventStamp,
): readonly WebhookEvent[] {
  let events: WebhookEvent[] | undefined;
  for (const inc of increments) {
    if (inc.limit <= 0 || inc.amount <= 0) continue;
    const before = usedBefore(inc);
    const used = before + inc.amount;
    for (const t of thresholds) {
      // Integer arithmetic: before < t% of limit <= used.
      if (before * 100 >= t * inc.limit) continue;
      if (used * 100 < t * inc.limit) break;
      const w = after.find(
        (s) => s.category === inc.category && s.unit === inc.unit && s.window === inc.window,
      );
      const { id, at } = stamp();
      events ??= [];
      events.push({
        id,
        type: 'fair_use.threshold',
        accountId,
        at,
        data: {
          account_id: accountId,
          category: inc.category,
          unit: inc.unit,
          window: inc.window,
          threshold: t,
          limit: inc.limit,
          used,
          remaining: Math.max(0, inc.limit - used),
          resets_at: w ? isoSeconds(w.endsAt) : null,
        },
      });
    }
  }
  return events ?? NO_EVENTS;
}

const NO_EVENTS: readonly WebhookEvent[] = Object.freeze([]);

/**
 * The balance events of a move from `before` to `after`: `tokens.low_balance` when it falls below
 * the account's low-balance setting (from at or above it: armed again once it rises back), and
 * `tokens.depleted` when it reaches 0 from above.
 */
export function balanceEvents(
  accountId: string,
  before: number,
  after: number,
  lowBalance: number | null,
  stamp: EventStamp,
): readonly WebhookEvent[] {
  // Most moves cross nothing: answered without allocating.
  if (
    after >= before ||
    !((lowBalance !== null && before >= lowBalance && after < lowBalance) || (before > 0 && after === 0))
  )
    return NO_EVENTS;
  const events: WebhookEvent[] = [];
  if (lowBalance !== null && before >= lowBalance && after < lowBalance) {
    const { id, at } = stamp();
    events.push({
      id,
      type: 'tokens.low_balance',
      accountId,
      at,
      data: { account_id: accountId, balance: after, low_balance: lowBalance },
    });
  }
  if (before > 0 && after === 0) {
    const { id, at } = stamp();
    events.push({ id, type: 'tokens.depleted', accountId, at, data: { account_id: accountId, balance: 0 } });
  }
  return events;
}

/** The body of every delivery of an event: `{"type", "timestamp", "data"}`, made once when it is recorded. */
export function eventBody(event: WebhookEvent): string {
  return JSON.stringify({ type: event.type, timestamp: isoSeconds(event.at), data: event.data });
}

/**
 * Seconds to wait after a failed attempt `n` (1-based) before the next: 5 s, 5 min, 30 min, 2 h,
 * 5 h, 10 h, 10 h (about 28 h in all), each moved by up to 20% either way so that endpoints that
 * fail together are not retried together. Null: no more attempts, the delivery has failed.
 */
export const RETRY_DELAYS_SECONDS: readonly number[] = [5, 300, 1800, 7200, 18000, 36000, 36000];

export function retryDelay(failedAttempts: number, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_SECONDS[failedAttempts - 1];
  if (base === undefined) return null;
  return Math.max(1, Math.round(base * (0.8 + 0.4 * random())));
}

/** An event of a change an operator made (a key, an account's status): recorded in its transaction. */
export function changeEvent(
  type: 'key.created' | 'key.revoked' | 'account.status_changed',
  accountId: string,
  at: EpochSeconds,
  data: Record<string, unknown>,
): WebhookEvent {
  return { id: newId('msg', at * 1000), type, accountId, at, data: { account_id: accountId, ...data } };
}

export const keyCreated = (key: {
  id: string;
  accountId: string;
  name: string | null;
  createdAt: EpochSeconds;
}) => changeEvent('key.created', key.accountId, key.createdAt, { key_id: key.id, name: key.name });

export const statusChanged = (accountId: string, at: EpochSeconds, previous: string, status: string) =>
  changeEvent('account.status_changed', accountId, at, { status, previous_status: previous });
