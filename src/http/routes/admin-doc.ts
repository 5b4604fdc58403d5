/** @module What every admin route shares: its app type (typed by its schemas) and its schema's common parts. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import Type from 'typebox';
import { ErrorBodySchema } from '../schemas.js';

/** The admin routes' app: typed by their schemas. */
export type AdminApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** A route's schema: its own parts (typed: the handler's request is inferred from them) and the shared ones. */
export const doc = <S extends object>(summary: string, extra: S = {} as S) => ({
  tags: ['admin'],
  summary,
  security: [{ adminToken: [] }],
  // Successes as the use cases shape them (docs/api.md), serialised as JSON.stringify would.
  response: { '2xx': Type.Unknown(), '4xx': ErrorBodySchema, '5xx': ErrorBodySchema },
  ...extra,
});
