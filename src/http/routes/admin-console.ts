/**
 * @module The admin API's console links: a sign-in link for a user, printed to the operator instead
 * of mailed (`toolgate console link`); registered inside adminRoutes, behind its token check, when
 * the console is on.
 */
import Type from 'typebox';
import { unwrap } from '../../domain/api-error.js';
import type { ConsoleService } from '../../service/console.js';
import { type AdminApp, by, created, doc, strict } from './admin-doc.js';

export function adminConsoleRoutes(app: AdminApp, links: ConsoleService): void {
  app.post(
    '/console/links',
    {
      schema: doc('createConsoleLink', 'Make a console sign-in link for a user (single use, 15 minutes)', {
        body: Type.Object(
          {
            email: Type.String({ maxLength: 254 }),
            account_id: Type.Optional(Type.String({ maxLength: 100 })),
          },
          strict,
        ),
      }),
    },
    async (request, reply) => {
      const { email, account_id } = request.body;
      return created(reply, unwrap(await links.operatorLink(by(request), email, account_id)));
    },
  );
}
