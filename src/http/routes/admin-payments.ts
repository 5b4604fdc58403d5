/**
 * @module The admin API's money: token packs (/topups) and each account's Stripe side (show, sync
 * from Stripe, a portal URL); registered inside adminRoutes, behind its token check.
 */
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { unwrap } from '../../domain/api-error.js';
import type { Services } from '../../service/index.js';
import { type AdminApp, by, doc, Id, strict } from './admin-doc.js';

/** Where a customer comes back from Stripe's portal: the account's Billing page in the console. */
export type ReturnUrl = (request: FastifyRequest, accountId: string) => string;

export function adminPaymentRoutes(app: AdminApp, s: Services, returnUrl: ReturnUrl): void {
  app.get('/topups', { schema: doc('listTopups', 'The token packs for sale') }, async () => ({
    data: await s.payments.listTopups(),
  }));

  app.put(
    '/topups/:id',
    {
      schema: doc('setTopup', 'Create or replace a token pack (its price must be a one-time Stripe price)', {
        params: Id,
        body: Type.Object(
          { tokens: Type.Integer({ minimum: 1 }), stripe_price: Type.String({ maxLength: 255 }) },
          strict,
        ),
      }),
    },
    async (request) => unwrap(await s.payments.setTopup(request.params.id, request.body, by(request))),
  );

  app.delete(
    '/topups/:id',
    { schema: doc('removeTopup', 'Stop selling a token pack', { params: Id }) },
    async (request) => unwrap(await s.payments.removeTopup(request.params.id, by(request))),
  );

  app.get(
    '/accounts/:id/billing',
    {
      schema: doc('getAccountBilling', "An account's Stripe customer, subscription and latest events", {
        params: Id,
      }),
    },
    async (request) => unwrap(await s.payments.show(request.params.id)),
  );

  app.post(
    '/accounts/:id/billing/sync',
    {
      schema: doc('syncAccountBilling', "Read the account's subscription back from Stripe and apply it", {
        params: Id,
      }),
    },
    async (request) => unwrap(await s.payments.sync(request.params.id, by(request))),
  );

  app.post(
    '/accounts/:id/billing/portal',
    {
      schema: doc('createBillingPortal', "A Stripe customer portal URL for the account's customer", {
        params: Id,
      }),
    },
    async (request) => ({
      url: unwrap(await s.payments.portal(request.params.id, returnUrl(request, request.params.id))),
    }),
  );

  app.get(
    '/billing/unmatched',
    {
      schema: doc(
        'listUnmatchedStripeEvents',
        'Stripe events that matched no account (unknown customers), newest first',
      ),
    },
    async () => ({ data: await s.payments.unmatched() }),
  );
}
