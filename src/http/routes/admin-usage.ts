/**
 * @module The admin API's fair use: check and consume atomically (idempotent by key), and the usage
 * history; registered inside adminRoutes, behind its token check.
 */
import Type from 'typebox';
import { unwrap } from '../../domain/api-error.js';
import type { Services } from '../../service/index.js';
import { ErrorBodySchema, UsageAnswerSchema } from '../../tools/schemas.js';
import { type AdminApp, doc, Id, strict } from './admin-doc.js';

export function adminUsageRoutes(app: AdminApp, s: Services): void {
  app.post(
    '/accounts/:id/usage',
    {
      schema: doc('recordUsage', 'Check and consume fair use atomically (idempotent by key)', {
        params: Id,
        // Also how the answer is serialised: a compiled serialiser, not JSON.stringify.
        response: { 200: UsageAnswerSchema, '4xx': ErrorBodySchema, '5xx': ErrorBodySchema },
        body: Type.Object(
          {
            category: Type.String({
              description: 'A category of the plan: enrich, search or one of its own',
            }),
            records: Type.Optional(Type.Integer({ minimum: 0 })),
            requests: Type.Optional(Type.Integer({ minimum: 0 })),
            unit: Type.Optional(
              Type.String({
                maxLength: 32,
                description: 'A unit of the category (with amount, instead of records)',
              }),
            ),
            amount: Type.Optional(Type.Integer({ minimum: 0, description: 'The amount of unit consumed' })),
            idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          },
          strict,
        ),
      }),
    },
    (request, reply) =>
      s.usage.record(request.params.id, request.body).then((result) => {
        const { response, replayed } = unwrap(result);
        if (replayed) reply.header('idempotent-replayed', 'true');
        return response;
      }),
  );

  app.get(
    '/accounts/:id/usage/history',
    {
      schema: doc(
        'showUsageHistory',
        "An account's usage history for every key at once, by day, key or tool",
        {
          params: Id,
          // Only shapes here: what a day is, the range and the groupings are the service's rules,
          // so the API and the CLI refuse the same things with the same messages.
          querystring: Type.Object(
            {
              from: Type.Optional(
                Type.String({ maxLength: 20, description: 'YYYY-MM-DD (default: to - 29 days)' }),
              ),
              to: Type.Optional(
                Type.String({ maxLength: 20, description: 'YYYY-MM-DD (default: today, UTC)' }),
              ),
              by: Type.Optional(Type.String({ maxLength: 20, description: 'day (default), key or tool' })),
            },
            strict,
          ),
        },
      ),
    },
    async (request) => unwrap(await s.billing.history(request.params.id, request.query)),
  );
}
