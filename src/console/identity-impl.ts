/**
 * @module The ConsoleIdentity (identity.ts) as the console implements it: the session cookie read
 * straight from the request's header and looked up through the console service, and CSRF tokens
 * made and checked with @fastify/csrf (what @fastify/csrf-protection uses) against the same secret
 * cookie, so that pages outside the console's plugin scope (OAuth consent) share one token scheme.
 */
import { fastifyCookie } from '@fastify/cookie';
import { Tokens } from '@fastify/csrf';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ConsoleService, safeReturnTo } from '../service/console.js';
import type { ConsoleIdentity, SignedIn } from './identity.js';

export interface CookieNames {
  session: string;
  csrf: string;
  /** Secure (https public URL): the `__Host-` names and the Secure flag. */
  secure: boolean;
}

export function cookieNames(secure: boolean): CookieNames {
  return secure
    ? { session: '__Host-toolgate_session', csrf: '__Host-toolgate_csrf', secure }
    : { session: 'toolgate_session', csrf: 'toolgate_csrf', secure };
}

export const cookieOptions = (names: CookieNames) =>
  ({ path: '/', httpOnly: true, sameSite: 'lax', secure: names.secure }) as const;

/** The request's cookies, parsed once per request whether or not @fastify/cookie ran for it. */
function cookiesOf(request: FastifyRequest): Record<string, string | undefined> {
  const parsed = (request as { cookies?: Record<string, string | undefined> }).cookies;
  if (parsed) return parsed;
  const header = request.headers.cookie;
  return header ? fastifyCookie.parse(header) : {};
}

/** Adds a Set-Cookie header (Fastify keeps every set-cookie value given, in order). */
export function appendSetCookie(reply: FastifyReply, cookie: string): void {
  reply.header('set-cookie', cookie);
}

const WHO = Symbol('console.who');
type WithWho = FastifyRequest & { [WHO]?: Promise<SignedIn | undefined> };

export class CookieIdentity implements ConsoleIdentity {
  private readonly tokens = new Tokens({});

  constructor(
    /** The console's links and sessions (the admin API makes operators' links with it). */
    readonly service: ConsoleService,
    readonly names: CookieNames,
  ) {}

  /** Asked once per request, however many times it is called. */
  who(request: FastifyRequest): Promise<SignedIn | undefined> {
    const r = request as WithWho;
    r[WHO] ??= this.service.signedIn(cookiesOf(request)[this.names.session]);
    return r[WHO];
  }

  redirectToSignIn(reply: FastifyReply, returnTo: string): FastifyReply {
    const path = safeReturnTo(returnTo) ?? '/console/';
    return reply.redirect(`/console/sign-in?return_to=${encodeURIComponent(path)}`, 303);
  }

  csrfToken(request: FastifyRequest, reply: FastifyReply): string {
    let secret = cookiesOf(request)[this.names.csrf];
    if (!secret) {
      secret = this.tokens.secretSync();
      // Later tokens of this request use the same secret.
      (request as { cookies?: Record<string, string | undefined> }).cookies = {
        ...cookiesOf(request),
        [this.names.csrf]: secret,
      };
      appendSetCookie(reply, fastifyCookie.serialize(this.names.csrf, secret, cookieOptions(this.names)));
    }
    return this.tokens.create(secret);
  }

  checkCsrf(request: FastifyRequest): boolean {
    const secret = cookiesOf(request)[this.names.csrf];
    const body = request.body as { _csrf?: unknown } | undefined;
    const token = body && typeof body === 'object' ? body._csrf : undefined;
    return typeof secret === 'string' && typeof token === 'string' && this.tokens.verify(secret, token);
  }

  /** The Set-Cookie value that gives the browser its session. */
  sessionCookie(value: string): string {
    return fastifyCookie.serialize(this.names.session, value, cookieOptions(this.names));
  }

  /** The Set-Cookie value that removes it. */
  clearSessionCookie(): string {
    return fastifyCookie.serialize(this.names.session, '', { ...cookieOptions(this.names), maxAge: 0 });
  }
}
