/**
 * @module Who is signed in to the console: the one interface its pages (the OAuth consent page
 * among them) ask, so that none reads the session cookie or the session rows itself.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { UserRole } from '../domain/users.js';

/** One account a signed-in person belongs to, as one of its users. */
export interface Membership {
  accountId: string;
  accountName: string;
  userId: string;
  role: UserRole;
}

/** A signed-in person: one email, any number of accounts. */
export interface SignedIn {
  email: string;
  /** The session's id (not its cookie value): an audit entry or a grant may name it. */
  sessionId: string;
  memberships: Membership[];
}

export interface ConsoleIdentity {
  /** The person signed in on this request, or undefined (no cookie, expired, ended, or console off). */
  who(request: FastifyRequest): Promise<SignedIn | undefined>;
  /**
   * Sends the person to sign in, coming back to `returnTo` afterwards. `returnTo` must be a path on
   * this origin (it starts with a single `/`); anything else is replaced by the console's start.
   */
  redirectToSignIn(reply: FastifyReply, returnTo: string): FastifyReply;
}
