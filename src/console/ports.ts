/**
 * @module What the console asks of other surfaces, as interfaces they implement (OAuth implements
 * both): the grants of "Connected apps", and the pending authorization the consent page shows and
 * answers. The pages and the page context import these; no page declares a port.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Membership, SignedIn } from './identity.js';

/** One grant as the Connected apps page lists it. */
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

/** An authorization waiting for the person's answer, as the consent page shows it. */
export interface PendingConsent {
  uid: string;
  clientName: string;
  /** Where the client sends people back: the host shown, and the URI the form's CSP must allow. */
  redirectHost: string;
  redirectUri: string;
}

/**
 * The OAuth authorization a browser is in the middle of. Each method reads the interaction from the
 * request's own cookie (`req`, `res`: the library reads and may set cookies); the answers give
 * where the browser goes next (back to the authorization server).
 */
export interface Consent {
  /** The unanswered interaction `uid` of this browser, or undefined (unknown, expired, another browser's, answered). */
  pending(req: IncomingMessage, res: ServerResponse, uid: string): Promise<PendingConsent | undefined>;
  /** Allows the client for `membership`'s account (a grant for that account only). */
  allow(req: IncomingMessage, res: ServerResponse, who: SignedIn, membership: Membership): Promise<string>;
  deny(req: IncomingMessage, res: ServerResponse): Promise<string>;
}
