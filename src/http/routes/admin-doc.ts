/**
 * @module What every admin route shares: its app type (typed by its schemas) and its schema's common
 * parts.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import Type from 'typebox';
import type { AuditContext } from '../../service/audit.js';
import { ErrorBodySchema } from '../../tools/schemas.js';

/** The admin routes' app: typed by their schemas. */
export type AdminApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * A route's schema: its own parts (typed: the handler's request is inferred from them) and the shared ones.
 * `operationId` (camelCase, stable: generated clients name their methods after it) is given here so
 * no admin route can go without one.
 */
export const doc = <S extends object>(operationId: string, summary: string, extra: S = {} as S) => ({
  operationId,
  tags: ['admin'],
  summary,
  security: [{ adminToken: [] }],
  // Successes as the use cases shape them (docs/admin-api.md), serialised as JSON.stringify would.
  response: { '2xx': Type.Unknown(), '4xx': ErrorBodySchema, '5xx': ErrorBodySchema },
  ...extra,
});

/**
 * Who acts on this admin request, for the use cases that change something: the token check sets it
 * before any handler runs, so none can act unaudited.
 */
export function by(request: Pick<FastifyRequest, 'acting'>): AuditContext {
  if (!request.acting) throw new Error('An admin request reached a handler without an actor.');
  return request.acting;
}

export const Id = Type.Object({ id: Type.String({ maxLength: 100 }) });
export const KeyIdParam = Type.Object({ key_id: Type.String({ maxLength: 100 }) });
export const UserIdParam = Type.Object({ user_id: Type.String({ maxLength: 100 }) });
export const PageQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$' })),
    after: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);
export const strict = { additionalProperties: false } as const;

export const pageOf = (q: { limit?: string; after?: string }) =>
  [q.limit === undefined ? undefined : Number(q.limit), q.after] as const;

export function created(reply: FastifyReply, body: unknown) {
  return reply.code(201).send(body);
}
