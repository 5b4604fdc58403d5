/**
 * @module The OAuth consent page, /console/consent/:uid: the signed-in person (or sign-in first, and
 * back here) chooses one of their accounts and allows or denies the client. The authorization
 * itself is OAuth's (the `Consent` port): this page shows it and passes the answer on. An account
 * the person does not belong to, another browser's interaction or one already answered is refused;
 * the CSRF check is the console's, as on every POST.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allowFormAction } from '../../http/web-headers.js';
import { type ConsolePageDeps, renderPlainPage } from '../context.js';
import type { Membership, SignedIn } from '../identity.js';
import type { Consent, PendingConsent } from '../ports.js';

/** How much of a client's name the page shows: it is the client's to choose, at any length. */
export const CLIENT_NAME_LIMIT = 100;

/** `text` cut to `limit` characters (code points), the last one an ellipsis when cut. */
export function clip(text: string, limit = CLIENT_NAME_LIMIT): string {
  const chars = Array.from(text);
  return chars.length <= limit ? text : `${chars.slice(0, limit - 1).join('')}\u2026`;
}

/** The CSP source for a redirect URI: its origin (http and https), else its scheme (a native app's). */
export function cspSource(redirectUri: string): string | undefined {
  try {
    const url = new URL(redirectUri);
    const source = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
    // Only characters a CSP source may hold: anything else is left out rather than let into the header.
    return /^[a-z][a-z0-9+.-]*:(\/\/[a-z0-9.[\]:-]+)?$/i.test(source) ? source : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why the person may not allow a connector for this account, or undefined when they may. A grant is
 * an API key's equal, so it takes what making a key takes: an owner, of an account neither suspended
 * nor closed.
 */
export async function allowRefusal(deps: ConsolePageDeps, m: Membership): Promise<string | undefined> {
  if (m.role !== 'owner') return `Only an owner of ${m.accountName} can allow a connector.`;
  const status = (await deps.uses.reads.getSnapshot(m.accountId))?.account.status;
  if (status !== undefined && status !== 'active')
    return `${m.accountName} is ${status}: no connector can be allowed for it.`;
  return undefined;
}

type UidRequest = FastifyRequest<{ Params: { uid: string } }>;
const UID_PARAMS = {
  type: 'object',
  properties: { uid: { type: 'string', maxLength: 128 } },
  required: ['uid'],
} as const;

const message = (reply: FastifyReply, status: number, title: string, text: string) =>
  renderPlainPage(reply, 'error', { title, status, message: text }, status);

const expired = (reply: FastifyReply) =>
  message(
    reply,
    400,
    'Link expired',
    'This authorization request has expired or belongs to another browser. Start the connection again from the app.',
  );

export async function consentPage(
  app: FastifyInstance,
  deps: ConsolePageDeps & { consent: Consent },
): Promise<void> {
  /** The pending interaction and the signed-in person, or undefined with the answer sent. */
  const ready = async (
    request: UidRequest,
    reply: FastifyReply,
  ): Promise<{ pending: PendingConsent; who: SignedIn } | undefined> => {
    const pending = await deps.consent.pending(request.raw, reply.raw, request.params.uid);
    if (!pending) {
      await expired(reply);
      return undefined;
    }
    const who = await deps.identity.who(request);
    if (!who) {
      deps.identity.redirectToSignIn(reply, `/console/consent/${encodeURIComponent(pending.uid)}`);
      return undefined;
    }
    return { pending, who };
  };

  app.get<{ Params: { uid: string } }>(
    '/consent/:uid',
    { schema: { hide: true, params: UID_PARAMS } },
    async (request, reply) => {
      const found = await ready(request, reply);
      if (!found) return reply;
      const { pending, who } = found;
      // The browser applies form-action to the redirects after the POST too: they lead to the client.
      const formTo = cspSource(pending.redirectUri);
      if (formTo) allowFormAction(reply, [formTo]);
      const accounts = await Promise.all(
        who.memberships.map(async (m) => ({
          id: m.accountId,
          name: m.accountName,
          refused: (await allowRefusal(deps, m)) ?? null,
        })),
      );
      return renderPlainPage(reply, 'consent', {
        stylesheet: 'consent.css',
        title: who.memberships.length > 0 ? 'Connect an app' : 'No account',
        email: who.email,
        action: `/console/consent/${encodeURIComponent(pending.uid)}`,
        clientName: clip(pending.clientName),
        redirectHost: pending.redirectHost,
        accounts,
        allowed: accounts.filter((a) => a.refused === null),
        refused: accounts.filter((a) => a.refused !== null),
      });
    },
  );

  app.post<{ Params: { uid: string }; Body: { decision?: unknown; account_id?: unknown } }>(
    '/consent/:uid',
    { schema: { hide: true, params: UID_PARAMS } },
    async (request, reply) => {
      const found = await ready(request, reply);
      if (!found) return reply;
      const body = request.body ?? {};
      if (body.decision !== 'allow')
        return reply.redirect(await deps.consent.deny(request.raw, reply.raw), 303);
      const membership = found.who.memberships.find((m) => m.accountId === body.account_id);
      if (!membership) return message(reply, 403, 'Refused', 'You do not belong to that account.');
      const refusal = await allowRefusal(deps, membership);
      if (refusal) return message(reply, 403, 'Refused', refusal);
      return reply.redirect(await deps.consent.allow(request.raw, reply.raw, found.who, membership), 303);
    },
  );
}
