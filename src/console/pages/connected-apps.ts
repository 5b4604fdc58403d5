/**
 * @module Connected apps: the account's OAuth grants (agents a person connected through the MCP
 * authorization flow), each revocable. The grants come through `ConnectedApps`, which the OAuth
 * surface provides (ports.ts); without it the page says there are none.
 */
import type { FastifyInstance } from 'fastify';
import { userActor } from '../../service/console.js';
import {
  type AccountParams,
  accountGuard,
  accountOf,
  accountPage,
  accountThingParams,
  type ConsolePageDeps,
  notFound,
} from '../context.js';

type GrantParams = AccountParams & { grantId: string };
const GRANT_PARAMS = accountThingParams('grantId', 128);

export async function connectedAppsPage(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  accountPage(
    app,
    deps,
    { path: 'connected-apps', current: 'Connected apps', template: 'connected-apps' },
    async (accountId) => ({ apps: await deps.connectedApps.list(accountId) }),
  );

  app.post<{ Params: GrantParams }>(
    '/a/:accountId/connected-apps/:grantId/revoke',
    { schema: { hide: true, params: GRANT_PARAMS }, preHandler: accountGuard(deps, true) },
    async (request, reply) => {
      const { who, membership } = accountOf(request);
      const revoked = await deps.connectedApps.revoke(
        membership.accountId,
        request.params.grantId,
        userActor(who.email).actor,
      );
      if (!revoked) throw notFound();
      return reply.redirect(`/console/a/${membership.accountId}/connected-apps`, 303);
    },
  );
}
