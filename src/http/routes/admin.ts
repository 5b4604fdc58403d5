/**
 * @module The admin API under /admin/v1, behind the bearer TOOLGATE_ADMIN_TOKEN (compared in
 * constant time). It is not registered at all when no token is configured; API keys never open it.
 * Every handler acts as the token's name, so every change it makes is in the audit trail.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { AdminToken } from '../../config.js';
import type { Services } from '../../service/index.js';
import { bearer, sameDigest, secretDigest, unwrap } from '../auth.js';
import { ApiError } from '../errors.js';
import type { RateLimits } from '../rate-limit.js';
import { ErrorBodySchema, UsageAnswerSchema } from '../schemas.js';
import { refuseUnstorable } from '../storable.js';
import { doc } from './admin-doc.js';
import { adminToolRoutes } from './admin-tools.js';
import { adminWebhookRoutes } from './admin-webhooks.js';

const Id = Type.Object({ id: Type.String({ maxLength: 100 }) });
const KeyIdParam = Type.Object({ key_id: Type.String({ maxLength: 100 }) });
const UserIdParam = Type.Object({ user_id: Type.String({ maxLength: 100 }) });
const PageQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$' })),
    after: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);
const strict = { additionalProperties: false } as const;

const pageOf = (q: { limit?: string; after?: string }) =>
  [q.limit === undefined ? undefined : Number(q.limit), q.after] as const;

function created(reply: FastifyReply, body: unknown) {
  return reply.code(201).send(body);
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is acting on the admin API: `admin:<token name>`. */
    actor: string | null;
  }
}

export async function adminRoutes(
  instance: FastifyInstance,
  opts: { services: Services; adminTokens: readonly AdminToken[]; limits?: RateLimits },
) {
  // Typed by the schemas: each handler's body, params and query are what its schema validated.
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { services, adminTokens } = opts;
  app.decorateRequest('actor', null);

  // Each token's actor made once: the same string every request, so looking it up hashes nothing.
  const expected = adminTokens.map((t) => ({ actor: `admin:${t.name}`, digest: secretDigest(t.token) }));
  // One set of use cases per admin token, made once: the actors are known in advance.
  const actors = new Map(expected.map((e) => [e.actor, services.as(e.actor)]));
  /** The use cases acting as the caller. Every handler goes through this, so none can act unaudited. */
  const s = (request: Pick<FastifyRequest, 'actor'>) => {
    const acting = request.actor === null ? undefined : actors.get(request.actor);
    if (!acting) throw new Error('An admin request reached a handler without an actor.');
    return acting;
  };

  // The presented strings that matched a token, with its actor: a token already known costs a
  // lookup, not a digest. Only a string equal to a configured token gets in, so this holds no more
  // than the tokens.
  const matched = new Map<string, string>();
  app.addHook('onRequest', (request, reply, done) => {
    try {
      opts.limits?.beforeAdminAuth(request);
    } catch (err) {
      done(err as Error);
      return;
    }
    const presented = bearer(request.headers.authorization);
    let actor = presented ? matched.get(presented) : undefined;
    if (!actor) {
      // Every token is compared, in constant time, so the time taken says nothing about which matched.
      const digest = secretDigest(presented ?? '');
      for (const e of expected) if (sameDigest(digest, e.digest) && presented) actor = e.actor;
      if (actor && presented) matched.set(presented, actor);
    }
    if (!actor) {
      opts.limits?.adminAuthFailed(request, reply);
      done(new ApiError('invalid_admin_token'));
      return;
    }
    request.actor = actor;
    done();
  });
  // Once for every admin route, before its schema: what PostgreSQL could not store is refused on both backends.
  app.addHook('preValidation', refuseUnstorable);

  app.post(
    '/accounts',
    {
      schema: doc('Create an account', {
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
    async (request, reply) => created(reply, unwrap(await s(request).accounts.create(request.body))),
  );

  app.get('/accounts', { schema: doc('List accounts', { querystring: PageQuery }) }, async (request) => {
    const [limit, after] = pageOf(request.query);
    return { data: unwrap(await s(request).accounts.list(limit, after)) };
  });

  app.get('/accounts/:id', { schema: doc('Show an account', { params: Id }) }, async (request) =>
    unwrap(await s(request).accounts.get(request.params.id)),
  );

  app.patch(
    '/accounts/:id',
    {
      schema: doc('Update an account (closing revokes every key)', {
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
    async (request) => unwrap(await s(request).accounts.update(request.params.id, request.body)),
  );

  app.post(
    '/accounts/:id/keys',
    {
      schema: doc('Create an API key (the key is in this answer only)', {
        params: Id,
        body: Type.Optional(Type.Object({ name: Type.Optional(Type.String({ maxLength: 100 })) }, strict)),
      }),
    },
    async (request, reply) => {
      const body = request.body ?? {};
      return created(reply, unwrap(await s(request).keys.create(request.params.id, body.name)));
    },
  );

  app.get(
    '/accounts/:id/keys',
    { schema: doc("List an account's keys", { params: Id }) },
    async (request) => ({
      data: unwrap(await s(request).keys.list(request.params.id)),
    }),
  );

  app.delete('/keys/:key_id', { schema: doc('Revoke a key', { params: KeyIdParam }) }, async (request) =>
    unwrap(await s(request).keys.revoke(request.params.key_id)),
  );

  app.post(
    '/accounts/:id/users',
    {
      schema: doc('Add a user', {
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
      return created(reply, unwrap(await s(request).users.add(request.params.id, body.email, body.role)));
    },
  );

  app.get(
    '/accounts/:id/users',
    { schema: doc("List an account's users", { params: Id }) },
    async (request) => ({
      data: unwrap(await s(request).users.list(request.params.id)),
    }),
  );

  app.delete('/users/:user_id', { schema: doc('Remove a user', { params: UserIdParam }) }, async (request) =>
    unwrap(await s(request).users.remove(request.params.user_id)),
  );

  app.post(
    '/accounts/:id/tokens',
    {
      schema: doc('Grant, charge or adjust tokens (idempotent by key)', {
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
      const answer = unwrap(await s(request).tokens.apply(request.params.id, request.body));
      if (answer.replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(answer.replayed || answer.entry === null ? 200 : 201).send(answer);
    },
  );

  app.get(
    '/accounts/:id/tokens',
    { schema: doc('The token ledger', { params: Id, querystring: PageQuery }) },
    async (request) => {
      const [limit, after] = pageOf(request.query);
      return {
        data: unwrap(await s(request).tokens.ledger(request.params.id, limit, after)),
      };
    },
  );

  app.post(
    '/accounts/:id/usage',
    {
      schema: doc('Check and consume fair use atomically (idempotent by key)', {
        params: Id,
        // Also how the answer is serialised: a compiled serialiser, not JSON.stringify.
        response: { 200: UsageAnswerSchema, '4xx': ErrorBodySchema, '5xx': ErrorBodySchema },
        body: Type.Object(
          {
            category: Type.String({ description: 'enrich or search' }),
            records: Type.Optional(Type.Integer({ minimum: 0 })),
            requests: Type.Optional(Type.Integer({ minimum: 0 })),
            idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          },
          strict,
        ),
      }),
    },
    (request, reply) =>
      s(request)
        .usage.record(request.params.id, request.body)
        .then((result) => {
          const { response, replayed } = unwrap(result);
          if (replayed) reply.header('idempotent-replayed', 'true');
          return response;
        }),
  );

  app.get(
    '/accounts/:id/usage/history',
    {
      schema: doc("An account's usage history for every key at once, by day, key or tool", {
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
      }),
    },
    async (request) => unwrap(await s(request).billing.history(request.params.id, request.query)),
  );

  app.get('/plans', { schema: doc('The plan catalogue') }, async (request) => ({
    data: await s(request).plans.list(),
  }));

  app.put(
    '/plans/:id',
    {
      schema: doc('Create or replace a plan', {
        params: Id,
        body: Type.Object(
          {
            unlimited: Type.Optional(Type.Boolean()),
            limits: Type.Object({}),
            // null (or leaving it out): not a subscription.
            subscription: Type.Optional(Type.Union([Type.Literal('monthly'), Type.Null()])),
          },
          strict,
        ),
      }),
    },
    async (request) => unwrap(await s(request).plans.put(request.params.id, request.body)),
  );

  app.get(
    '/audit',
    {
      schema: doc('The audit trail of admin actions, oldest first (an unknown account_id is 404)', {
        querystring: Type.Object(
          { ...PageQuery.properties, account_id: Type.Optional(Type.String({ maxLength: 100 })) },
          strict,
        ),
      }),
    },
    async (request) => {
      const q = request.query;
      const [limit, after] = pageOf(q);
      return {
        data: unwrap(
          await s(request).audit.list({
            ...(q.account_id !== undefined ? { accountId: q.account_id } : {}),
            ...(limit !== undefined ? { limit } : {}),
            ...(after !== undefined ? { after } : {}),
          }),
        ),
      };
    },
  );

  adminToolRoutes(app, s);
  adminWebhookRoutes(app, s);
}
