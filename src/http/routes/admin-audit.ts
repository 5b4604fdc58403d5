/**
 * @module The admin API's the audit trail of admin actions; registered inside adminRoutes, behind its
 * token check.
 */
import Type from 'typebox';
import { unwrap } from '../../domain/api-error.js';
import type { Services } from '../../service/index.js';
import { type AdminApp, doc, PageQuery, pageOf, strict } from './admin-doc.js';

export function adminAuditRoutes(app: AdminApp, s: Services): void {
  app.get(
    '/audit',
    {
      schema: doc(
        'listAuditEvents',
        'The audit trail of admin actions, oldest first (an unknown account_id is 404)',
        {
          querystring: Type.Object(
            { ...PageQuery.properties, account_id: Type.Optional(Type.String({ maxLength: 100 })) },
            strict,
          ),
        },
      ),
    },
    async (request) => {
      const q = request.query;
      const [limit, after] = pageOf(q);
      return {
        data: unwrap(
          await s.audit.list({
            ...(q.account_id !== undefined ? { accountId: q.account_id } : {}),
            ...(limit !== undefined ? { limit } : {}),
            ...(after !== undefined ? { after } : {}),
          }),
        ),
      };
    },
  );
}
