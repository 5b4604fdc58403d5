/**
 * @module API keys: the account's keys (name, hint, created, last used); for owners, a "Create key"
 * form after which the full key is shown once, and "Revoke" per key behind a confirmation page
 * (no script needed). A member sees the list only; an owner's forms answer a member 404.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { userActor } from '../../service/console.js';
import type { KeyRecord } from '../../service/keys.js';
import {
  ACCOUNT_PARAMS,
  type AccountParams,
  accountGuard,
  accountOf,
  accountThingParams,
  type ConsolePageDeps,
  notFound,
  PageError,
  renderAccountPage,
} from '../context.js';

type KeyParams = AccountParams & { keyId: string };
const KEY_PARAMS = accountThingParams('keyId');

/** A first call with a new key, ready to paste into a terminal: get_account, which costs nothing. */
export function curlLine(base: string, key: string): string {
  return [
    `curl -s -X POST ${base}/api/v1/tools/get_account \\`,
    `  -H 'Authorization: Bearer ${key}' \\`,
    `  -H 'Content-Type: application/json' -d '{}'`,
  ].join('\n');
}

async function keysOf(deps: ConsolePageDeps, accountId: string): Promise<KeyRecord[]> {
  const listed = await deps.uses.keys.list(accountId);
  if (!listed.ok) throw notFound();
  // Active keys first, newest first within each.
  return listed.value.sort((a, b) =>
    a.status === b.status ? (a.id < b.id ? 1 : -1) : a.status === 'active' ? -1 : 1,
  );
}

/** The account's key `keyId`, or 404 (another account's key is not found either). */
async function keyOf(deps: ConsolePageDeps, accountId: string, keyId: string): Promise<KeyRecord> {
  const key = (await keysOf(deps, accountId)).find((k) => k.id === keyId);
  if (!key) throw notFound();
  return key;
}

async function keysPageView(
  deps: ConsolePageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  extra: Record<string, unknown> = {},
  status = 200,
): Promise<FastifyReply> {
  const { accountId } = accountOf(request).membership;
  return renderAccountPage(
    request,
    reply,
    'API keys',
    'keys',
    { keys: await keysOf(deps, accountId), created: null, curl: null, error: null, name: '', ...extra },
    status,
  );
}

export async function keysPage(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  const page = { schema: { hide: true, params: ACCOUNT_PARAMS } };
  const keyPage = { schema: { hide: true, params: KEY_PARAMS } };

  app.get<{ Params: AccountParams }>(
    '/a/:accountId/keys',
    { ...page, preHandler: accountGuard(deps) },
    (request, reply) => keysPageView(deps, request, reply),
  );

  app.post<{ Params: AccountParams; Body: { name?: unknown } }>(
    '/a/:accountId/keys',
    { ...page, preHandler: accountGuard(deps, true) },
    async (request, reply) => {
      const { who, membership } = accountOf(request);
      const raw = typeof request.body?.name === 'string' ? request.body.name.trim() : '';
      const created = await deps.uses.keys.create(
        membership.accountId,
        raw === '' ? null : raw,
        userActor(who.email),
        { activeAccount: true },
      );
      if (!created.ok) {
        if (created.error.code === 'not_found') throw notFound();
        return keysPageView(deps, request, reply, { error: created.error.message, name: raw }, 400);
      }
      return keysPageView(
        deps,
        request,
        reply,
        { created: created.value, curl: curlLine(deps.service.publicUrl(), created.value.key) },
        201,
      );
    },
  );

  app.get<{ Params: KeyParams }>(
    '/a/:accountId/keys/:keyId/revoke',
    { ...keyPage, preHandler: accountGuard(deps, true) },
    async (request, reply) => {
      const { accountId } = accountOf(request).membership;
      const key = await keyOf(deps, accountId, request.params.keyId);
      if (key.status !== 'active') throw new PageError(409, 'This key is already revoked.');
      return renderAccountPage(request, reply, 'API keys', 'key-revoke', { key, title: 'Revoke key' });
    },
  );

  app.post<{ Params: KeyParams }>(
    '/a/:accountId/keys/:keyId/revoke',
    { ...keyPage, preHandler: accountGuard(deps, true) },
    async (request, reply) => {
      const { who, membership } = accountOf(request);
      const key = await keyOf(deps, membership.accountId, request.params.keyId);
      const revoked = await deps.uses.keys.revoke(key.id, userActor(who.email));
      if (!revoked.ok) throw notFound();
      return reply.redirect(`/console/a/${membership.accountId}/keys`, 303);
    },
  );
}
