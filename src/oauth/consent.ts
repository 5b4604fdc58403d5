/**
 * @module The consent page's OAuth side (the console's `Consent` port; the page itself is
 * src/console/pages/consent.ts): reads this browser's interaction from the library, and finishes it
 * with a grant for the chosen account only (a key row, grants.ts) or with the person's denial.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import type { Membership, SignedIn } from '../console/identity.js';
import type { Consent, PendingConsent } from '../console/ports.js';
import { grantActor } from './grants.js';
import type { OAuthServer } from './server.js';
import { MCP_SCOPE, SCOPES } from './settings.js';

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

export function oauthConsent(oauth: OAuthServer): Consent {
  /** The interaction of this browser (its cookie), unanswered, or undefined. */
  const unanswered = async (req: IncomingMessage, res: ServerResponse): Promise<Details | undefined> => {
    try {
      const details = await (await oauth.oidc()).interactionDetails(req, res);
      // An interaction already answered is done: a replayed form must not make a second grant.
      return details.result === undefined ? details : undefined;
    } catch {
      // An unknown, expired or other browser's interaction: the same answer for each.
      return undefined;
    }
  };
  /** Records the answer; where the browser goes next (the library's resume URL). */
  const finish = async (
    req: IncomingMessage,
    res: ServerResponse,
    result: Parameters<Provider['interactionResult']>[2],
  ) => (await oauth.oidc()).interactionResult(req, res, result, { mergeWithLastSubmission: false });

  return {
    async pending(req, res, uid) {
      const details = await unanswered(req, res);
      if (details?.uid !== uid) return undefined;
      return describe(oauth, details);
    },
    async allow(req, res, who, membership) {
      const details = await unanswered(req, res);
      if (!details) throw new Error('the interaction ended before it was allowed');
      const sub = await oauth.subjectOf(who.email);
      const grantId = await allow(oauth, details, who, membership, sub);
      return finish(req, res, { login: { accountId: sub }, consent: { grantId } });
    },
    deny: (req, res) =>
      finish(req, res, { error: 'access_denied', error_description: 'The person denied the request.' }),
  };
}

async function describe(oauth: OAuthServer, details: Details): Promise<PendingConsent> {
  const clientId = String(details.params.client_id);
  const client = await (await oauth.oidc()).Client.find(clientId);
  const redirectUri = String(details.params.redirect_uri ?? '');
  let redirectHost = '';
  try {
    redirectHost = new URL(redirectUri).host;
  } catch {}
  return { uid: details.uid, clientName: client?.clientName ?? clientId, redirectHost, redirectUri };
}

/** The grant for the chosen account: the scopes and resource asked for, and `mcp` on /mcp always. */
async function allow(
  oauth: OAuthServer,
  details: Details,
  who: SignedIn,
  membership: Membership,
  sub: string,
): Promise<string> {
  const provider = await oauth.oidc();
  const clientId = String(details.params.client_id);
  const client = await provider.Client.find(clientId);
  const grant = new provider.Grant({
    jti: oauth.grants.newGrantId(),
    accountId: sub,
    clientId,
  } as ConstructorParameters<typeof provider.Grant>[0]);
  // What was asked (the first prompt may be the sign-in, which names no missing scopes), of the
  // scopes known here: unknown ones are ignored, not refused.
  const asked = String(details.params.scope ?? '')
    .split(' ')
    .filter((scope) => (SCOPES as readonly string[]).includes(scope));
  grant.addOIDCScope([...new Set([...asked, MCP_SCOPE])].join(' '));
  grant.addResourceScope(oauth.resource, MCP_SCOPE);
  const grantId = await grant.save();
  await oauth.grants.create({
    id: grantId,
    accountId: membership.accountId,
    clientId,
    clientName: client?.clientName ?? clientId,
    actor: grantActor(who.email, clientId),
  });
  return grantId;
}
