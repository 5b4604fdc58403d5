/**
 * @module The consent page, /oauth/consent/:uid: the console's signed-in person (or sign-in first,
 * and back here) chooses one of their accounts and allows or denies the client. Allowing makes a
 * grant for that account only (a key row, grants.ts); an account the person does not belong to,
 * a missing CSRF token or another browser's interaction is refused.
 */
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import type { SignedIn } from '../console/identity.js';
import { consentPage, messagePage, noAccountPage } from './consent-view.js';
import { grantActor } from './grants.js';
import { type OAuthServer, subjectOf } from './server.js';
import { MCP_SCOPE, MOUNT, SCOPES } from './settings.js';

/**
 * An HTML answer that no page may frame. `formTo` is where the consent form ends up: the browser
 * applies form-action to the redirects after the POST too, which lead to the client's redirect URI.
 */
const html = (reply: FastifyReply, status: number, body: string, formTo?: string) =>
  reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header(
      'content-security-policy',
      `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${formTo ? ` ${formTo}` : ''}; frame-ancestors 'none'`,
    )
    .send(body);

/** The CSP source for a redirect URI: its origin (http and https), else its scheme (a native app's). */
function cspSource(redirectUri: unknown): string | undefined {
  try {
    const url = new URL(String(redirectUri));
    const source = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
    // Only characters a CSP source may hold: anything else is left out rather than let into the header.
    return /^[a-z][a-z0-9+.-]*:(\/\/[a-z0-9.[\]:-]+)?$/i.test(source) ? source : undefined;
  } catch {
    return undefined;
  }
}

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

export async function consentRoutes(app: FastifyInstance, opts: { oauth: OAuthServer }) {
  const { oauth } = opts;
  await app.register(formbody);

  /** The interaction of this browser (its cookie) and this uid, or an answer already sent. */
  const interaction = async (request: FastifyRequest<{ Params: { uid: string } }>, reply: FastifyReply) => {
    try {
      const details = await (await oauth.oidc()).interactionDetails(request.raw, reply.raw);
      // An interaction already answered is done: a replayed form must not make a second grant.
      if (details.uid === request.params.uid && details.result === undefined) return details;
    } catch {
      // An unknown, expired or other browser's interaction: the same answer for each.
    }
    html(
      reply,
      400,
      messagePage(
        'Link expired',
        'This authorization request has expired or belongs to another browser. Start the connection again from the app.',
      ),
    );
    return undefined;
  };

  const signedIn = async (request: FastifyRequest, reply: FastifyReply, uid: string) => {
    const identity = oauth.identity;
    if (!identity) {
      html(
        reply,
        503,
        messagePage(
          'Console off',
          'Signing in to the console is needed to connect an app, and it is not set up on this server.',
        ),
      );
      return undefined;
    }
    const who = await identity.who(request);
    if (!who) identity.redirectToSignIn(reply, `${MOUNT}/consent/${encodeURIComponent(uid)}`);
    return who;
  };

  const describe = async (details: Details) => {
    const clientId = String(details.params.client_id);
    const client = await (await oauth.oidc()).Client.find(clientId);
    let redirectHost = '';
    try {
      redirectHost = new URL(String(details.params.redirect_uri)).host;
    } catch {}
    return { clientId, clientName: client?.clientName ?? clientId, redirectHost };
  };

  app.get<{ Params: { uid: string } }>(
    `${MOUNT}/consent/:uid`,
    { schema: { hide: true } },
    async (request, reply) => {
      const details = await interaction(request, reply);
      if (!details) return reply;
      const who = await signedIn(request, reply, details.uid);
      if (!who) return reply;
      const client = await describe(details);
      const view = {
        action: `${MOUNT}/consent/${encodeURIComponent(details.uid)}`,
        csrf: oauth.identity!.csrfToken(request, reply),
        clientName: client.clientName,
        redirectHost: client.redirectHost,
        email: who.email,
      };
      const formTo = cspSource(details.params.redirect_uri);
      if (who.memberships.length === 0) return html(reply, 200, noAccountPage(view), formTo);
      return html(
        reply,
        200,
        consentPage({
          ...view,
          accounts: who.memberships.map((m) => ({ id: m.accountId, name: m.accountName })),
        }),
        formTo,
      );
    },
  );

  app.post<{ Params: { uid: string }; Body: Record<string, unknown> }>(
    `${MOUNT}/consent/:uid`,
    { schema: { hide: true } },
    async (request, reply) => {
      const details = await interaction(request, reply);
      if (!details) return reply;
      const who = await signedIn(request, reply, details.uid);
      if (!who) return reply;
      if (!oauth.identity!.checkCsrf(request))
        return html(
          reply,
          403,
          messagePage(
            'Refused',
            'The form was not sent from this page (no valid CSRF token). Go back and try again.',
          ),
        );
      const body = request.body ?? {};
      const provider = await oauth.oidc();
      if (body.decision !== 'allow') {
        reply.hijack();
        await provider.interactionFinished(
          request.raw,
          reply.raw,
          { error: 'access_denied', error_description: 'The person denied the request.' },
          { mergeWithLastSubmission: false },
        );
        return reply;
      }
      const membership = who.memberships.find((m) => m.accountId === body.account_id);
      if (!membership) return html(reply, 403, messagePage('Refused', 'You do not belong to that account.'));
      const grantId = await allow(oauth, details, who, membership);
      reply.hijack();
      await provider.interactionFinished(
        request.raw,
        reply.raw,
        { login: { accountId: subjectOf(who.email) }, consent: { grantId } },
        { mergeWithLastSubmission: false },
      );
      return reply;
    },
  );
}

/** The grant for the chosen account: the scopes and resource asked for, and `mcp` on /mcp always. */
async function allow(
  oauth: OAuthServer,
  details: Details,
  who: SignedIn,
  membership: SignedIn['memberships'][number],
): Promise<string> {
  const provider = await oauth.oidc();
  const clientId = String(details.params.client_id);
  const client = await provider.Client.find(clientId);
  const grant = new provider.Grant({
    jti: oauth.grants.newGrantId(),
    accountId: subjectOf(who.email),
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
