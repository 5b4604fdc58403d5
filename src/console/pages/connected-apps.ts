/**
 * @module Connected apps: the account's OAuth grants (agents a person connected through the MCP
 * authorization flow), each revocable. The grants come through `ConnectedApps`, which the OAuth
 * surface provides; without it the page says there are none.
 */
import type { FastifyInstance } from 'fastify';
import { userActor } from '../../service/console.js';
import {
  ACCOUNT_PARAMS,
  type AccountParams,
  accountGuard,
  accountOf,
  accountThingParams,
  type ConsolePageDeps,
  notFound,
  postGuards,
  renderAccountPage,
} from '../context.js';

/** One grant as the page lists it. */
export interface ConnectedApp {
  /** The grant's id: what the revoke form carries. */
  id: string;
  /** The client's name, as it registered. */
  clientName: string;
  /** Where it sends people back (its redirect URI's host). */
  redirectHost: string;
  /** Who allowed it (an email). */
  grantedBy: string;
  /** ISO 8601. */
  createdAt: string;
  lastUsedAt: string | null;
}

export interface ConnectedApps {
  list(accountId: string): Promise<ConnectedApp[]>;
  /** Revokes the account's grant `grantId`, audited as `actor`; false when the account has no such grant. */
  revoke(accountId: string, grantId: string, actor: string): Promise<boolean>;
}

export const NO_CONNECTED_APPS: ConnectedApps = {
  list: async () => [],
  revoke: async () => false,
};

type GrantParams = AccountParams & { grantId: string };
const GRANT_PARAMS = accountThingParams('grantId', 128);

export async function connectedAppsPage(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  app.get<{ Params: AccountParams }>(
    '/a/:accountId/connected-apps',
    { schema: { hide: true, params: ACCOUNT_PARAMS }, preHandler: accountGuard(deps) },
    async (request, reply) => {
      const { accountId } = accountOf(request).membership;
      return renderAccountPage(request, reply, 'Connected apps', 'connected-apps', {
        apps: await deps.connectedApps.list(accountId),
      });
    },
  );

  app.post<{ Params: GrantParams }>(
    '/a/:accountId/connected-apps/:grantId/revoke',
    { schema: { hide: true, params: GRANT_PARAMS }, preHandler: postGuards(app, deps, true) },
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
