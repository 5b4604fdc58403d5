/** @module The console's "Connected apps" (src/console/pages/connected-apps.ts), answered from the grants' key rows and the provider's grants. */
import type { ConnectedApp, ConnectedApps } from '../console/ports.js';
import { isoSeconds } from '../domain/clock.js';
import type { OAuthServer } from './server.js';

export function connectedApps(oauth: OAuthServer): ConnectedApps {
  return {
    async list(accountId) {
      const apps: ConnectedApp[] = [];
      for (const key of await oauth.grants.list(accountId)) {
        if (key.revokedAt !== null) continue;
        const provider = await oauth.oidc();
        const grant = await provider.Grant.find(key.id);
        const client = grant?.clientId ? await provider.Client.find(grant.clientId) : undefined;
        let redirectHost = '';
        try {
          redirectHost = new URL(client?.redirectUris?.[0] ?? '').host;
        } catch {}
        apps.push({
          id: key.id,
          clientName: client?.clientName ?? key.name?.replace(/^OAuth: /, '') ?? grant?.clientId ?? '',
          redirectHost,
          grantedBy: (await oauth.emailOf(grant?.accountId)) ?? '',
          createdAt: isoSeconds(key.createdAt),
          lastUsedAt: key.lastUsedAt === null ? null : isoSeconds(key.lastUsedAt),
        });
      }
      return apps;
    },
    revoke: (accountId, grantId, actor) => oauth.revokeGrant(grantId, accountId, actor),
  };
}
