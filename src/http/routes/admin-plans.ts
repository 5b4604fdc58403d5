/**
 * @module The admin API's the plan catalogue: list, create or replace; registered inside adminRoutes,
 * behind its token check.
 */
import Type from 'typebox';
import { unwrap } from '../../domain/api-error.js';
import type { Services } from '../../service/index.js';
import { type AdminApp, by, doc, Id, strict } from './admin-doc.js';

export function adminPlanRoutes(app: AdminApp, s: Services): void {
  app.get('/plans', { schema: doc('listPlans', 'The plan catalogue') }, async (_request) => ({
    data: await s.plans.list(),
  }));

  app.put(
    '/plans/:id',
    {
      schema: doc('setPlan', 'Create or replace a plan', {
        params: Id,
        body: Type.Object(
          {
            unlimited: Type.Optional(Type.Boolean()),
            limits: Type.Object({}),
            // null (or leaving it out): not a subscription.
            subscription: Type.Optional(Type.Union([Type.Literal('monthly'), Type.Null()])),
            // The recurring Stripe price that sells it (checked with Stripe); null: not for sale.
            stripe_price: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
            period_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
            // What customers see instead of the id (the console); null: the id.
            name: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
            description: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
          },
          strict,
        ),
      }),
    },
    async (request) => unwrap(await s.plans.put(request.params.id, request.body, by(request))),
  );
}
