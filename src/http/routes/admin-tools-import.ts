/**
 * @module The admin API's catalogue import (`POST /admin/v1/tools/import`): a whole catalogue file,
 * all or nothing, or a dry run saying what would change; what `toolgate tools import` does on the
 * database. Registered inside adminRoutes, behind its token check.
 */
import Type from 'typebox';
import { unwrap } from '../../domain/api-error.js';
import type { Services } from '../../service/index.js';
import { ErrorBodySchema } from '../../tools/schemas.js';
import { type AdminApp, by } from './admin-doc.js';

export function adminToolImportRoutes(app: AdminApp, s: Services): void {
  app.post(
    '/tools/import',
    {
      schema: {
        operationId: 'importTools',
        tags: ['admin'],
        summary:
          'Import a catalogue ({"tools": [...]}): every tool created or replaced, or none (every problem listed)',
        security: [{ adminToken: [] }],
        response: { '2xx': Type.Unknown(), '4xx': ErrorBodySchema, '5xx': ErrorBodySchema },
        querystring: Type.Object(
          { dry_run: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])) },
          { additionalProperties: false },
        ),
        // Checked by the catalogue's own rules, which list every problem with its member path.
        body: Type.Unknown(),
      },
    },
    async (request) =>
      unwrap(
        await s.catalogue.import(request.body, { dryRun: request.query.dry_run === 'true' }, by(request)),
      ),
  );
}
