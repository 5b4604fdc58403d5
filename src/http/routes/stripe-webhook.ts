/**
 * @module Stripe's webhook, POST /webhooks/stripe: the raw body, exactly as Stripe signed it, goes
 * to the payment use case, which verifies it and applies the event at most once. A bad signature is
 * 400 and changes nothing; a failure to apply is 5xx, so that Stripe retries.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError, unwrap } from '../../domain/api-error.js';
import { ProviderError } from '../../payments/provider.js';
import type { PaymentService } from '../../service/payments.js';

/** Stripe's events are small; a body much larger than any of them is no event. */
const BODY_LIMIT = 512 * 1024;

export async function stripeWebhookRoutes(
  app: FastifyInstance,
  opts: { payments: PaymentService },
): Promise<void> {
  // In this scope only: the body stays the bytes that were signed (the JSON parser would lose them).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: BODY_LIMIT },
    (_request, body, done) => done(null, body),
  );
  app.post('/webhooks/stripe', { schema: { hide: true } }, async (request) => {
    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const signature = request.headers['stripe-signature'];
    try {
      const received = unwrap(
        await opts.payments.receive(raw, typeof signature === 'string' ? signature : undefined),
      );
      if (received.kind === 'duplicate') return { received: true, duplicate: true };
      // Kept with no effect: the operator should know (a plan or pack not mapped, a customer not toolgate's).
      if (received.outcome === 'unknown_customer' || received.outcome === 'unknown_price')
        request.log.warn(
          { outcome: received.outcome },
          `a Stripe event was kept with no effect: ${received.detail}`,
        );
      return { received: true, outcome: received.outcome };
    } catch (err) {
      // Stripe could not be asked for the object's latest state: nothing applied, Stripe retries.
      if (err instanceof ProviderError) {
        request.log.warn({ err: err.message }, 'a Stripe event could not be applied; Stripe will retry it');
        throw new ApiError('unavailable', 'Stripe could not be reached to apply this event; retry later.');
      }
      throw err;
    }
  });
}
