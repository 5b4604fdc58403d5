/**
 * @module The ConsoleIdentity (identity.ts) as the console implements it: the session cookie read
 * straight from the request's header and looked up through the console service, and the cookies'
 * names and options (the session's, and the CSRF secret's of @fastify/csrf-protection).
 */
import { fastifyCookie } from '@fastify/cookie';
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
export function cookiesOf(request: FastifyRequest): Record<string, string | undefined> {
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
  constructor(
    /** The console's links and sessions (the admin API makes operators' links with it). */
    readonly service: ConsoleService,
    readonly names: CookieNames,
    /** Who is signed in when not the console's own sessions (a test's stand-in); the session cookie otherwise. */
    private readonly signedIn?: ConsoleIdentity['who'],
  ) {}

  /** Asked once per request, however many times it is called. */
  who(request: FastifyRequest): Promise<SignedIn | undefined> {
    const r = request as WithWho;
    r[WHO] ??= this.signedIn
      ? this.signedIn(request)
      : this.service.signedIn(cookiesOf(request)[this.names.session]);
    return r[WHO];
  }

  /**
   * What a CSRF token is bound to: the session cookie (a token of another session is refused), or
   * before sign-in nothing more than the browser's own CSRF secret cookie.
   */
  csrfBinding(request: FastifyRequest): string {
    const session = cookiesOf(request)[this.names.session];
    // Never empty: @fastify/csrf refuses every token bound to ''.
    return session ? `session:${session}` : 'browser';
  }

  redirectToSignIn(reply: FastifyReply, returnTo: string): FastifyReply {
    const path = safeReturnTo(returnTo) ?? '/console/';
    return reply.redirect(`/console/sign-in?return_to=${encodeURIComponent(path)}`, 303);
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
