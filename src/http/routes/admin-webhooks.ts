/**
 * @module The admin API's webhooks: endpoints (`/admin/v1/webhooks`), their deliveries, and replay
 * (`/admin/v1/webhook-deliveries/{id}/replay`); registered inside adminRoutes, behind its token check.
 * The body's types are checked here; what they mean (a URL toolgate may send to, known events,
 * thresholds from 1 to 100, an account that exists) by the use case, each problem in its own words.
 */
import Type from 'typebox';
import { unwrap } from '../../domain/api-error.js';
import type { Services } from '../../service/index.js';
import { type AdminApp, by, doc } from './admin-doc.js';

const Id = Type.Object({ id: Type.String({ maxLength: 100 }) });
const strict = { additionalProperties: false } as const;

export function adminWebhookRoutes(app: AdminApp, s: Services): void {
  app.post(
    '/webhooks',
    {
      schema: doc('addWebhook', 'Add a webhook endpoint (its signing secret is in this answer only)', {
        body: Type.Object(
          {
            url: Type.String({ maxLength: 2000 }),
            events: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 })),
            thresholds: Type.Optional(Type.Array(Type.Number(), { maxItems: 100 })),
            account_id: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
          },
          strict,
        ),
      }),
    },
    async (request, reply) => reply.code(201).send(unwrap(await s.webhooks.add(request.body, by(request)))),
  );

  app.get(
    '/webhooks',
    {
      schema: doc('listWebhooks', "The webhook endpoints (global and every account's, or one account's)", {
        querystring: Type.Object({ account_id: Type.Optional(Type.String({ maxLength: 100 })) }, strict),
      }),
    },
    async (request) => ({ data: unwrap(await s.webhooks.list(request.query.account_id)) }),
  );

  app.get(
    '/webhooks/:id',
    { schema: doc('showWebhook', 'Show a webhook endpoint', { params: Id }) },
    async (request) => unwrap(await s.webhooks.get(request.params.id)),
  );

  app.delete(
    '/webhooks/:id',
    { schema: doc('removeWebhook', 'Remove a webhook endpoint and its deliveries', { params: Id }) },
    async (request) => unwrap(await s.webhooks.remove(request.params.id, by(request))),
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: doc('listWebhookDeliveries', "A webhook endpoint's deliveries, oldest first", {
        params: Id,
        querystring: Type.Object(
          {
            limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$' })),
            after: Type.Optional(Type.String({ maxLength: 100 })),
          },
          strict,
        ),
      }),
    },
    async (request) => {
      const { limit, after } = request.query;
      return {
        data: unwrap(
          await s.webhooks.deliveries(
            request.params.id,
            limit === undefined ? undefined : Number(limit),
            after,
          ),
        ),
      };
    },
  );

  app.post(
    '/webhook-deliveries/:id/replay',
    {
      schema: doc('replayWebhookDelivery', 'Send a delivery again now, with a fresh retry schedule', {
        params: Id,
      }),
    },
    async (request) => unwrap(await s.webhooks.replay(request.params.id, by(request))),
  );
}
