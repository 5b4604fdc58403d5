/**
 * @module The admin API's API keys: create (the key is in that answer only), list an account's,
 * revoke; registered inside adminRoutes, behind its token check.
 */
import Type from 'typebox';
import { unwrap } from '../../domain/api-error.js';
import type { Services } from '../../service/index.js';
import { type AdminApp, by, created, doc, Id, KeyIdParam, strict } from './admin-doc.js';

export function adminKeyRoutes(app: AdminApp, s: Services): void {
  app.post(
    '/accounts/:id/keys',
    {
      schema: doc('createKey', 'Create an API key (the key is in this answer only)', {
        params: Id,
        body: Type.Optional(Type.Object({ name: Type.Optional(Type.String({ maxLength: 100 })) }, strict)),
      }),
    },
    async (request, reply) => {
      const body = request.body ?? {};
      return created(reply, unwrap(await s.keys.create(request.params.id, body.name, by(request))));
    },
  );

  app.get(
    '/accounts/:id/keys',
    { schema: doc('listKeys', "List an account's keys", { params: Id }) },
    async (request) => ({
      data: unwrap(await s.keys.list(request.params.id)),
    }),
  );

  app.delete(
    '/keys/:key_id',
    { schema: doc('revokeKey', 'Revoke a key', { params: KeyIdParam }) },
    async (request) => unwrap(await s.keys.revoke(request.params.key_id, by(request))),
  );
}
