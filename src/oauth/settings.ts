/**
 * @module OAuth's fixed settings and rules that need no OAuth library: the scopes, the provider's
 * routes and mount point, the /mcp resource, which redirect URIs are allowed. Kept apart from
 * provider.ts so that a server loads oidc-provider (some 300 ms and 29 MiB) only when a client
 * first uses OAuth.
 */

export const MCP_SCOPE = 'mcp';
export const SCOPES = ['openid', 'offline_access', MCP_SCOPE] as const;
export const ROUTES = {
  authorization: '/authorize',
  token: '/token',
  registration: '/register',
  revocation: '/revoke',
  jwks: '/jwks',
  end_session: '/logout',
  userinfo: '/userinfo',
} as const;
/** Where the provider is mounted on toolgate's app. */
export const MOUNT = '/oauth';

export const mcpResource = (publicUrl: string) => `${publicUrl}/mcp`;

/** https anywhere, or http on a loopback host (native and CLI clients); the rest is refused. */
export function redirectAllowed(uri: string): boolean {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.hash !== '') return false;
  if (url.protocol === 'https:') return true;
  if (url.protocol !== 'http:') return false;
  return url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
}
