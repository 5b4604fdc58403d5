/**
 * @module The admin API's webhook test (`POST /admin/v1/webhooks/{id}/test`): a signed
 * `webhook.test` event sent to the endpoint now, recorded as a delivery; what `toolgate webhooks
 * test` does on the database. Registered inside adminRoutes, behind its token check.
 */
import Type from 'typebox';
import { unwrap } from '../../domain/api-error.js';
import type { Services } from '../../service/index.js';
import { ErrorBodySchema } from '../../tools/schemas.js';
import { type AdminApp, by } from './admin-doc.js';

export function adminWebhookTestRoutes(app: AdminApp, s: Services): void {
  app.post(
    '/webhooks/:id/test',
    {
      schema: {
        operationId: 'testWebhook',
        tags: ['admin'],
        summary:
          'Send a signed webhook.test event to the endpoint now; answers its delivery after the attempt',
        security: [{ adminToken: [] }],
        response: { '2xx': Type.Unknown(), '4xx': ErrorBodySchema, '5xx': ErrorBodySchema },
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
      },
    },
    async (request) => unwrap(await s.webhooks.test(request.params.id, by(request))),
  );
}
