/**
 * @module The admin API's the token ledger: grant, charge or adjust (idempotent by key), and read it;
 * registered inside adminRoutes, behind its token check.
 */
import Type from 'typebox';
import { unwrap } from '../../domain/api-error.js';
import type { Services } from '../../service/index.js';
import { type AdminApp, by, doc, Id, PageQuery, pageOf, strict } from './admin-doc.js';

export function adminTokenRoutes(app: AdminApp, s: Services): void {
  app.post(
    '/accounts/:id/tokens',
    {
      schema: doc('recordTokens', 'Grant, charge or adjust tokens (idempotent by key)', {
        params: Id,
        body: Type.Object(
          {
            kind: Type.Union([Type.Literal('grant'), Type.Literal('charge'), Type.Literal('adjust')]),
            amount: Type.Integer(),
            reason: Type.Optional(Type.String({ maxLength: 500 })),
            idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          },
          strict,
        ),
      }),
    },
    async (request, reply) => {
      const answer = unwrap(await s.tokens.apply(request.params.id, request.body, by(request)));
      if (answer.replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(answer.replayed || answer.entry === null ? 200 : 201).send(answer);
    },
  );

  app.get(
    '/accounts/:id/tokens',
    { schema: doc('listTokenLedger', 'The token ledger', { params: Id, querystring: PageQuery }) },
    async (request) => {
      const [limit, after] = pageOf(request.query);
      return {
        data: unwrap(await s.tokens.ledger(request.params.id, limit, after)),
      };
    },
  );
}
