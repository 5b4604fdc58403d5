/**
 * @module The admin API's an account's users: add, list, change a role, remove; registered inside
 * adminRoutes, behind its token check.
 */
import Type from 'typebox';
import { unwrap } from '../../domain/api-error.js';
import type { Services } from '../../service/index.js';
import { type AdminApp, by, created, doc, Id, strict, UserIdParam } from './admin-doc.js';

export function adminUserRoutes(app: AdminApp, s: Services): void {
  app.post(
    '/accounts/:id/users',
    {
      schema: doc('addUser', 'Add a user', {
        params: Id,
        body: Type.Object(
          {
            email: Type.String({ maxLength: 254 }),
            role: Type.Optional(Type.Union([Type.Literal('owner'), Type.Literal('member')])),
          },
          strict,
        ),
      }),
    },
    async (request, reply) => {
      const { body } = request;
      return created(reply, unwrap(await s.users.add(request.params.id, body.email, body.role, by(request))));
    },
  );

  app.get(
    '/accounts/:id/users',
    { schema: doc('listUsers', "List an account's users", { params: Id }) },
    async (request) => ({
      data: unwrap(await s.users.list(request.params.id)),
    }),
  );

  app.patch(
    '/users/:user_id',
    {
      schema: doc('setUserRole', "Change a user's role (an account keeps at least one owner)", {
        params: UserIdParam,
        // Any string: the use case names the roles, in the same words on every door.
        body: Type.Object({ role: Type.String({ maxLength: 100 }) }, strict),
      }),
    },
    async (request) => unwrap(await s.users.setRole(request.params.user_id, request.body.role, by(request))),
  );

  app.delete(
    '/users/:user_id',
    { schema: doc('removeUser', 'Remove a user', { params: UserIdParam }) },
    async (request) => unwrap(await s.users.remove(request.params.user_id, by(request))),
  );
}
