/**
 * @module The admin API's accounts: create, list, show and update (closing revokes every key);
 * registered inside adminRoutes, behind its token check.
 */
import Type from 'typebox';
import { unwrap } from '../../domain/api-error.js';
import type { Services } from '../../service/index.js';
import { type AdminApp, by, created, doc, Id, PageQuery, pageOf, strict } from './admin-doc.js';

export function adminAccountRoutes(app: AdminApp, s: Services): void {
  app.post(
    '/accounts',
    {
      schema: doc('createAccount', 'Create an account', {
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            plan: Type.Optional(Type.String()),
            unlimited: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
            tokens: Type.Optional(Type.Integer({ minimum: 0 })),
          },
          strict,
        ),
      }),
    },
    async (request, reply) => created(reply, unwrap(await s.accounts.create(request.body, by(request)))),
  );

  app.get(
    '/accounts',
    { schema: doc('listAccounts', 'List accounts', { querystring: PageQuery }) },
    async (request) => {
      const [limit, after] = pageOf(request.query);
      return { data: unwrap(await s.accounts.list(limit, after)) };
    },
  );

  app.get(
    '/accounts/:id',
    { schema: doc('showAccount', 'Show an account', { params: Id }) },
    async (request) => unwrap(await s.accounts.get(request.params.id)),
  );

  app.patch(
    '/accounts/:id',
    {
      schema: doc('updateAccount', 'Update an account (closing revokes every key)', {
        params: Id,
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            plan: Type.Optional(Type.String()),
            status: Type.Optional(
              Type.Union([Type.Literal('active'), Type.Literal('suspended'), Type.Literal('closed')]),
            ),
            unlimited: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
            low_balance: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
          },
          strict,
        ),
      }),
    },
    async (request) => unwrap(await s.accounts.update(request.params.id, request.body, by(request))),
  );
}
