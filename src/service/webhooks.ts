/**
 * @module Use cases on webhooks: add an endpoint (its secret shown once), list, show and remove
 * endpoints, list an endpoint's deliveries, replay one, and send a test event now. Each change is audited (never the
 * secret), and this server's dispatcher and threshold cache are told at once.
 */

import { randomUUID } from 'node:crypto';
import { isoSeconds } from '../domain/clock.js';
import { fail, ok, type Result } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import {
  retryDelay,
  TEST_EVENT,
  validateEndpoint,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEvent,
} from '../domain/webhooks.js';
import type { DeliveryResult } from '../store/store.js';
import { BlockedAddressError, checkDestination } from '../webhooks/address-guard.js';
import { WebhookSender } from '../webhooks/sender.js';
import { newSigningSecret } from '../webhooks/signing.js';
import { type AuditContext, draftAudit } from './audit.js';
import { DEFAULT_PAGE, MAX_PAGE, now, type ServiceDeps } from './context.js';

export interface EndpointRecord {
  id: string;
  url: string;
  account_id: string | null;
  events: string[];
  thresholds: number[];
  created_at: string;
}

export interface DeliveryRecord {
  id: string;
  endpoint_id: string;
  event_id: string;
  type: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export interface AddEndpointInput {
  url?: unknown;
  events?: unknown;
  thresholds?: unknown;
  account_id?: unknown;
}

export const endpointRecord = (e: WebhookEndpoint): EndpointRecord => ({
  id: e.id,
  url: e.url,
  account_id: e.accountId,
  events: e.events,
  thresholds: e.thresholds,
  created_at: isoSeconds(e.createdAt),
});

export const deliveryRecord = (d: WebhookDelivery): DeliveryRecord => ({
  id: d.id,
  endpoint_id: d.endpointId,
  event_id: d.eventId,
  type: d.type,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: d.nextAttemptAt === null ? null : isoSeconds(d.nextAttemptAt),
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  created_at: isoSeconds(d.createdAt),
  updated_at: isoSeconds(d.updatedAt),
});

/** How long an endpoint has to answer a test event: what counts as delivered for every event. */
const TEST_TIMEOUT_MS = 10_000;

/**
 * Where the switch that lets endpoints be private is read: every server checks the address again
 * before each delivery, so setting it where the CLI runs lets an endpoint in that no server sends to.
 */
const SERVER_SETTING =
  "That is the server's setting: set it in the environment of every server (each checks the address again before every delivery); the CLI's shell alone is not enough.";

export class WebhookService {
  constructor(private readonly deps: ServiceDeps) {}

  async add(
    input: AddEndpointInput,
    by?: AuditContext,
  ): Promise<Result<EndpointRecord & { secret: string }>> {
    const valid = validateEndpoint(input);
    if (!valid.ok) return valid;
    let accountId: string | null = null;
    if (input.account_id !== undefined && input.account_id !== null) {
      if (typeof input.account_id !== 'string' || !(await this.deps.store.accounts.get(input.account_id)))
        return fail('invalid_arguments', `No account "${String(input.account_id)}".`);
      accountId = input.account_id;
    }
    if (!this.deps.webhookAllowPrivate) {
      try {
        await checkDestination(new URL(valid.value.url));
      } catch (err) {
        if (err instanceof BlockedAddressError)
          return fail('invalid_arguments', `url refused: ${err.message}. ${SERVER_SETTING}`);
        return fail(
          'invalid_arguments',
          `url refused: its host could not be resolved (${(err as { code?: string }).code ?? (err as Error).message}).`,
        );
      }
    }
    const endpoint: WebhookEndpoint = {
      id: newId('whe', this.deps.clock.now()),
      url: valid.value.url,
      accountId,
      events: valid.value.events,
      thresholds: valid.value.thresholds,
      createdAt: now(this.deps),
    };
    const secret = newSigningSecret();
    const audit = draftAudit(this.deps, by, 'webhook.add', accountId, endpoint.id, {
      url: endpoint.url,
      events: endpoint.events,
      thresholds: endpoint.thresholds,
    });
    await this.deps.store.webhooks.addEndpoint(endpoint, secret, audit);
    await this.deps.webhooksChanged?.();
    return ok({ ...endpointRecord(endpoint), secret });
  }

  async list(accountId?: string): Promise<Result<EndpointRecord[]>> {
    const all = await this.deps.store.webhooks.listEndpoints();
    return ok(all.filter((e) => accountId === undefined || e.accountId === accountId).map(endpointRecord));
  }

  async get(id: string): Promise<Result<EndpointRecord>> {
    const e = await this.deps.store.webhooks.getEndpoint(id);
    return e ? ok(endpointRecord(e)) : fail('not_found', `No webhook endpoint "${id}".`);
  }

  async remove(id: string, by?: AuditContext): Promise<Result<EndpointRecord>> {
    const current = await this.deps.store.webhooks.getEndpoint(id);
    if (!current) return fail('not_found', `No webhook endpoint "${id}".`);
    const audit = draftAudit(this.deps, by, 'webhook.remove', current.accountId, id, { url: current.url });
    const removed = await this.deps.store.webhooks.removeEndpoint(id, audit);
    if (!removed) return fail('not_found', `No webhook endpoint "${id}".`);
    await this.deps.webhooksChanged?.();
    return ok(endpointRecord(removed));
  }

  async deliveries(
    endpointId: string,
    limit: number = DEFAULT_PAGE,
    after?: string,
  ): Promise<Result<DeliveryRecord[]>> {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE)
      return fail('invalid_arguments', `limit must be from 1 to ${MAX_PAGE}.`);
    if (!(await this.deps.store.webhooks.getEndpoint(endpointId)))
      return fail('not_found', `No webhook endpoint "${endpointId}".`);
    const page = after === undefined ? { limit } : { limit, after };
    return ok((await this.deps.store.webhooks.listDeliveries(endpointId, page)).map(deliveryRecord));
  }

  async replay(deliveryId: string, by?: AuditContext): Promise<Result<DeliveryRecord>> {
    const current = await this.deps.store.webhooks.getDelivery(deliveryId);
    if (!current) return fail('not_found', `No webhook delivery "${deliveryId}".`);
    const endpoint = await this.deps.store.webhooks.getEndpoint(current.endpointId);
    const audit = draftAudit(this.deps, by, 'webhook.replay', endpoint?.accountId ?? null, deliveryId, {
      event_id: current.eventId,
    });
    const replayed = await this.deps.store.webhooks.replay(deliveryId, now(this.deps), audit);
    if (!replayed) return fail('not_found', `No webhook delivery "${deliveryId}".`);
    this.deps.webhookWake?.();
    return ok(deliveryRecord(replayed));
  }

  /**
   * Sends a signed `webhook.test` event to the endpoint now, whatever events it subscribes to: recorded
   * as a delivery like any other (so a failed one is retried, and replayable), leased to this call so
   * no dispatcher sends it at the same time. Answers the delivery after this first attempt.
   */
  async test(endpointId: string, by?: AuditContext): Promise<Result<DeliveryRecord>> {
    const endpoint = await this.deps.store.webhooks.getEndpoint(endpointId);
    if (!endpoint) return fail('not_found', `No webhook endpoint "${endpointId}".`);
    const at = now(this.deps);
    const event: WebhookEvent = {
      id: newId('msg', this.deps.clock.now()),
      type: TEST_EVENT,
      accountId: endpoint.accountId,
      at,
      data: { endpoint_id: endpoint.id, account_id: endpoint.accountId },
    };
    const lease = { token: randomUUID(), until: at + Math.ceil((2 * TEST_TIMEOUT_MS) / 1000) + 1 };
    const audit = draftAudit(this.deps, by, 'webhook.test', endpoint.accountId, endpoint.id, {
      event_id: event.id,
    });
    const deliveryId = newId('whd', this.deps.clock.now());
    const due = await this.deps.store.webhooks.addLeasedDelivery(
      event,
      { id: deliveryId, endpointId },
      lease,
      audit,
    );
    if (!due) return fail('not_found', `No webhook endpoint "${endpointId}".`);
    const sender = new WebhookSender({
      timeoutMs: TEST_TIMEOUT_MS,
      allowPrivate: this.deps.webhookAllowPrivate ?? false,
      connections: 1,
    });
    let sent: Awaited<ReturnType<WebhookSender['send']>>;
    try {
      sent = await sender.send(due.url, due.secret, { id: event.id, body: due.body }, now(this.deps));
    } finally {
      await sender.close();
    }
    const delay = sent.delivered ? null : retryDelay(1);
    const result: DeliveryResult = sent.delivered
      ? { status: 'delivered', nextAttemptAt: null, statusCode: sent.statusCode, error: null }
      : {
          status: delay === null ? 'failed' : 'pending',
          nextAttemptAt: delay === null ? null : now(this.deps) + delay,
          statusCode: sent.statusCode,
          error: sent.error,
        };
    await this.deps.store.webhooks.settle(deliveryId, lease.token, result, now(this.deps));
    // A retry is the dispatcher's, on whichever server: tell this one's.
    if (!sent.delivered) this.deps.webhookWake?.();
    const after = await this.deps.store.webhooks.getDelivery(deliveryId);
    return ok(deliveryRecord(after ?? due.delivery));
  }
}
