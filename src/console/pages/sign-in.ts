/**
 * @module Signing in and out: the email form (always the same answer, the link made and mailed
 * after it is sent, so neither the page nor its timing tells a known email from an unknown one),
 * the link's landing (a page that asks to continue; its POST uses the link, once, and opens the
 * session), the account chooser, and sign-out. A `return_to` is a path on this origin or ignored
 * (safeReturnTo), so no redirect it leads to can fail.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SlidingWindowLimiter } from '../../domain/rate-limit.js';
import { validateUser } from '../../domain/users.js';
import { safeReturnTo } from '../../service/console.js';
import { type ConsolePageDeps, renderPlainPage } from '../context.js';
import { appendSetCookie } from '../identity-impl.js';

/** Links asked for one email, and from one client address, per LIMIT_WINDOW_SECONDS. */
export const LINKS_PER_EMAIL = 5;
export const LINKS_PER_ADDRESS = 10;
const LIMIT_WINDOW_SECONDS = 15 * 60;

interface SignInBody {
  email?: unknown;
  return_to?: unknown;
}

/** The console's start (the chooser, or the one account), and sign-out. */
export async function signInPages(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    const who = await deps.identity.who(request);
    if (!who) return deps.identity.redirectToSignIn(reply, '/console/');
    if (who.memberships.length === 1)
      return reply.redirect(`/console/a/${who.memberships[0]!.accountId}/`, 303);
    return renderPlainPage(reply, 'chooser', {
      title: 'Your accounts',
      email: who.email,
      memberships: who.memberships,
    });
  });

  app.post('/sign-out', { schema: { hide: true } }, async (request, reply) => {
    const who = await deps.identity.who(request);
    if (who) await deps.service.signOut(who);
    appendSetCookie(reply, deps.identity.clearSessionCookie());
    return reply.redirect('/console/sign-in', 303);
  });

  await app.register(emailForm, deps);
  await app.register(linkLanding, deps);
}

const signInForm = (reply: FastifyReply, data: Record<string, unknown>, status = 200) =>
  renderPlainPage(reply, 'sign-in', { title: 'Sign in', ...data }, status);

/** The email form: the same answer for every email, the link made and mailed after it. */
async function emailForm(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  const clock = deps.uses.clock;
  const perEmail = new SlidingWindowLimiter(LINKS_PER_EMAIL, LIMIT_WINDOW_SECONDS, clock);
  const perAddress = new SlidingWindowLimiter(LINKS_PER_ADDRESS, LIMIT_WINDOW_SECONDS, clock);

  app.get<{ Querystring: { return_to?: string } }>(
    '/sign-in',
    { schema: { hide: true } },
    async (request, reply) => {
      const returnTo = safeReturnTo(request.query.return_to);
      // Sent here by another page (OAuth consent) while already signed in: straight back.
      if (returnTo && (await deps.identity.who(request))) return reply.redirect(returnTo, 303);
      return signInForm(reply, { returnTo });
    },
  );

  app.post<{ Body: SignInBody }>('/sign-in', { schema: { hide: true } }, async (request, reply) => {
    const returnTo = safeReturnTo(request.body?.return_to);
    const valid = validateUser(request.body?.email, 'member');
    if (!valid.ok) {
      return signInForm(reply, { returnTo, error: 'Enter an email address, like name@example.com.' }, 400);
    }
    const email = valid.value.email;
    // Both limits are counted for every attempt, known email or not: the answer stays the same.
    const byAddress = perAddress.take(request.ip);
    const byEmail = byAddress.allowed ? perEmail.take(email) : byAddress;
    if (!byAddress.allowed || !byEmail.allowed) {
      const wait = Math.max(byAddress.resetSeconds, byEmail.resetSeconds);
      reply.header('retry-after', String(wait));
      return renderPlainPage(
        reply,
        'too-many',
        { title: 'Too many attempts', minutes: Math.ceil(wait / 60) },
        429,
      );
    }
    mailLinkLater(deps, request, email, returnTo);
    return renderPlainPage(reply, 'check-email', {
      title: 'Check your email',
      signupOpen: deps.service.signupOpen,
    });
  });
}

/** After the answer: whether a link goes out (and how long that takes) shows in nothing it says. */
function mailLinkLater(
  deps: ConsolePageDeps,
  request: FastifyRequest,
  email: string,
  returnTo: string | null,
) {
  setImmediate(() => {
    deps.service
      .signInRequested(email, returnTo)
      .then((mail) => mail && deps.mailer.send(mail))
      .catch((err: unknown) => (deps.logger ?? request.log).error({ err }, 'console sign-in link not sent'));
  });
}

/**
 * The link's landing. Its GET only asks to continue: mail scanners and link previews fetch links
 * too, and a GET that used the link would spend it before the person clicks. The POST (with its
 * CSRF token, so no other site can sign a browser in with a link of its own) uses it.
 */
async function linkLanding(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  const linkInvalid = (reply: FastifyReply) =>
    renderPlainPage(reply, 'link-invalid', { title: 'This link cannot be used' }, 400);

  app.get<{ Querystring: { token?: string } }>(
    '/auth',
    { schema: { hide: true } },
    async (request, reply) => {
      // The token is in the URL: the page it leads to must not pass it on in a Referer.
      reply.header('referrer-policy', 'no-referrer');
      const token = request.query.token;
      if (!deps.service.linkShaped(token)) return linkInvalid(reply);
      return renderPlainPage(reply, 'link-confirm', { title: 'Sign in', token });
    },
  );

  app.post<{ Body: { token?: unknown } }>('/auth', { schema: { hide: true } }, async (request, reply) => {
    const followed = await deps.service.followLink(request.body?.token);
    if (!followed.ok) return linkInvalid(reply);
    appendSetCookie(reply, deps.identity.sessionCookie(followed.value.cookieValue));
    // A return_to kept by an older link is checked again: the redirect that ends a sign-in cannot fail.
    return reply.redirect(safeReturnTo(followed.value.next) ?? '/console/', 303);
  });
}
