/**
 * @module Sending one webhook: the body, signed as Standard Webhooks specifies (webhook-id,
 * webhook-timestamp, webhook-signature: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` keyed by the
 * secret's bytes after `whsec_`), POSTed through a connection pool whose connections are checked
 * against the address guard. A 2xx within the timeout is delivered; anything else is an attempt
 * that failed, with its status code or the reason it had none.
 */
import { isIP } from 'node:net';
import type { Agent } from 'undici';
import { BlockedAddressError, guardedLookup, hostOf, isBlockedAddress } from './address-guard.js';
import { sign } from './signing.js';

export interface SendResult {
  delivered: boolean;
  statusCode: number | null;
  /** Why it failed, in a few words, for the delivery's record (never the response body). */
  error: string | null;
}

export interface SenderOptions {
  /** How long an endpoint has to answer with a 2xx. */
  timeoutMs: number;
  /** Whether loopback and private addresses may be sent to (TOOLGATE_WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** Connections kept open to each endpoint's origin. */
  connections?: number;
}

/** How much of an answer is read (and thrown away) so its connection can be reused. */
const MAX_ANSWER_BYTES = 64 * 1024;

type Undici = typeof import('undici');

export class WebhookSender {
  /** undici is loaded at the first webhook, not at start: most servers send none, or none for a while. */
  private undici: Promise<{ agent: Agent; request: Undici['request'] }> | null = null;

  constructor(private readonly options: SenderOptions) {}

  private client(): Promise<{ agent: Agent; request: Undici['request'] }> {
    const { options } = this;
    this.undici ??= import('undici').then(({ Agent, request }) => ({
      request,
      agent: new Agent({
        connections: options.connections ?? 8,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        connect: { timeout: options.timeoutMs, ...(options.allowPrivate ? {} : { lookup: guardedLookup }) },
      }),
    }));
    return this.undici;
  }

  async send(
    url: string,
    secret: string,
    message: { id: string; body: string },
    timestamp: number,
  ): Promise<SendResult> {
    const target = new URL(url);
    // A literal address is connected to without a lookup: checked here, as the lookup checks names.
    const host = hostOf(target);
    if (!this.options.allowPrivate && isIP(host) && isBlockedAddress(host))
      return { delivered: false, statusCode: null, error: new BlockedAddressError(host, host).message };
    const { agent, request } = await this.client();
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const res = await request(target, {
        method: 'POST',
        dispatcher: agent,
        signal,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'toolgate-webhooks',
          'webhook-id': message.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': sign(secret, message.id, timestamp, message.body),
        },
        body: message.body,
      });
      await drain(res.body);
      const delivered = res.statusCode >= 200 && res.statusCode < 300;
      return {
        delivered,
        statusCode: res.statusCode,
        error: delivered ? null : `answered ${res.statusCode}`,
      };
    } catch (err) {
      return { delivered: false, statusCode: null, error: describe(err, signal, this.options.timeoutMs) };
    }
  }

  async close(): Promise<void> {
    if (this.undici) await (await this.undici).agent.close();
  }
}

async function drain(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<void> {
  let read = 0;
  for await (const chunk of body) {
    read += chunk.length;
    if (read > MAX_ANSWER_BYTES) {
      body.destroy();
      return;
    }
  }
}

function describe(err: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `no answer within ${timeoutMs} ms`;
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const inner = e.cause ?? e;
  if (inner instanceof BlockedAddressError || e instanceof BlockedAddressError)
    return (inner.message ?? e.message)!;
  if (
    e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e.code === 'UND_ERR_BODY_TIMEOUT' ||
    e.code === 'UND_ERR_CONNECT_TIMEOUT'
  )
    return `no answer within ${timeoutMs} ms`;
  return `${inner.code ?? 'error'}: ${(inner.message ?? String(err)).slice(0, 200)}`;
}
