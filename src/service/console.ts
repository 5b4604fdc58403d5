/**
 * @module The console's sign-in and sessions, on the services and the console's own sub-store: links
 * (a hash kept, single use, 15 minutes; an invitation's 7 days), sessions (a hash of the cookie value
 * kept, 24 h idle, 30 days at most), sign-up, and who a session's email is in which accounts, asked
 * on every request so that a removed membership counts at once. No Fastify here: the CLI and the
 * admin API make links too.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { AuditEntry } from '../domain/audit.js';
import { nowSeconds } from '../domain/clock.js';
import { fail, ok, type Result } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { validateUser } from '../domain/users.js';
import type { ConsoleLink, ConsoleMembership, ConsoleStore, UsageGroup } from '../store/store.js';
import type { AccountService } from './accounts.js';
import { type AuditContext, actingAs, draftAudit } from './audit.js';
import { type BillingService, type CountsView, countsView } from './billing.js';
import type { ServiceDeps } from './context.js';
import { guardRefusal, type UserService } from './users.js';

/** A signed-in person: one email, any number of accounts. */
export interface SignedIn {
  email: string;
  /** The session's id (not its cookie value): an audit entry or a grant may name it. */
  sessionId: string;
  memberships: ConsoleMembership[];
}

/** A mail with a sign-in link: to sign in, or an invitation (which names the account and who invited). */
export interface SignInMail {
  to: string;
  url: string;
  accountName?: string;
  /** The email of the owner who sent the invitation. */
  invitedBy?: string;
}

export const LINK_TTL_SECONDS = 15 * 60;
/** An invitation waits for its person longer than a sign-in they asked for a moment ago. */
export const INVITE_TTL_SECONDS = 7 * 24 * 60 * 60;
export const IDLE_SECONDS = 24 * 60 * 60;
export const ABSOLUTE_SECONDS = 30 * 24 * 60 * 60;
/** last_seen_at is written at most this often per session (a write per page view would be waste). */
const TOUCH_EVERY_SECONDS = 60;

export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const newToken = () => randomBytes(32).toString('base64url');
const LINK_TOKEN = /^[A-Za-z0-9_-]{20,100}$/;

/** Who acts, in the audit trail, when a signed-in person does something. */
export const userActor = (email: string): AuditContext => actingAs(`user:${email}`);

/**
 * A path on this origin, or null: starts with one `/` (not `//` nor `/\`, which browsers take for
 * another host), no control characters, of a sane length.
 */
export function safeReturnTo(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2000) return null;
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  if (/[\u0000-\u001f\u007f]/.test(value)) return null;
  // As a URL on this origin would resolve it: still this origin, and written in ASCII only (other
  // characters percent-encoded), so that it can stand in a Location header.
  const origin = 'http://return-to.invalid';
  let url: URL;
  try {
    url = new URL(value, origin);
  } catch {
    return null;
  }
  if (url.origin !== origin) return null;
  const path = `${url.pathname}${url.search}${url.hash}`;
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(path) && path.length <= 2000 ? path : null;
}

/** What the console's use cases stand on: the deps every use case has, and the use cases they call. */
export interface ConsoleServiceDeps {
  deps: ServiceDeps;
  accounts: AccountService;
  users: UserService;
  billing: BillingService;
}

export interface ConsoleServiceOptions {
  /** TOOLGATE_PUBLIC_URL, or the server's own address once it listens. */
  publicUrl: () => string;
  signup: 'open' | 'closed';
  signupPlan: string;
}

export interface LinkRequest {
  email: string;
  accountId?: string | null;
  purpose?: ConsoleLink['purpose'];
  returnTo?: string | null;
}

export type BreakdownRow = CountsView & { group: string };

export interface UsageBreakdown {
  byTool: BreakdownRow[];
  byKey: BreakdownRow[];
}

export interface Followed {
  /** The session cookie's value: given to the browser, never stored. */
  cookieValue: string;
  sessionId: string;
  email: string;
  /** Where to go: the link's path, its account, or the chooser. */
  next: string;
}

export class ConsoleService {
  private readonly deps: ServiceDeps;
  private readonly store: ConsoleStore;

  constructor(
    private readonly uses: ConsoleServiceDeps,
    private readonly options: ConsoleServiceOptions,
  ) {
    this.deps = uses.deps;
    this.store = uses.deps.store.console;
  }

  private now(): number {
    return nowSeconds(this.deps.clock);
  }

  /**
   * A key for `purpose` derived from the key secret every server of a deployment shares (so each
   * checks what another signed), never the secret itself.
   */
  derivedKey(purpose: string): Buffer {
    return createHmac('sha256', this.deps.keySecret).update(purpose).digest();
  }

  get signupOpen(): boolean {
    return this.options.signup === 'open';
  }

  publicUrl(): string {
    return this.options.publicUrl().replace(/\/+$/, '');
  }

  /** Stores a new link and answers its URL; no check of who the email is (callers decide). */
  async makeLink(request: LinkRequest, audit?: AuditEntry): Promise<string> {
    const token = newToken();
    const t = this.now();
    await this.store.addLink(
      {
        tokenHash: sha256(token),
        email: request.email,
        accountId: request.accountId ?? null,
        purpose: request.purpose ?? 'sign-in',
        returnTo: safeReturnTo(request.returnTo),
        createdAt: t,
        expiresAt: t + (request.purpose === 'invite' ? INVITE_TTL_SECONDS : LINK_TTL_SECONDS),
        usedAt: null,
      },
      audit,
    );
    return `${this.publicUrl()}/console/auth?token=${token}`;
  }

  /**
   * An operator's link (CLI, admin API), audited as `actor`: for a user of some account (of
   * `accountId` when given), or for anyone while sign-up is open and no account is named.
   */
  async operatorLink(by: AuditContext, email: unknown, accountId?: string): Promise<Result<{ url: string }>> {
    const valid = validateUser(email, 'member');
    if (!valid.ok) return valid;
    const address = valid.value.email;
    const memberships = await this.store.memberships(address);
    if (accountId !== undefined) {
      if (!memberships.some((m) => m.accountId === accountId))
        return fail('not_found', `No user ${address} in account "${accountId}".`);
    } else if (memberships.length === 0 && !this.signupOpen) {
      return fail('not_found', `No account has a user ${address} (and sign-up is closed).`);
    }
    const audit = draftAudit(this.deps, by, 'console.link', accountId ?? null, null, { email: address });
    return ok({ url: await this.makeLink({ email: address, accountId: accountId ?? null }, audit) });
  }

  /**
   * The sign-in form's work, done after the answer is sent (the answer never depends on it): the
   * mail to send, or undefined when the email is nobody's and sign-up is closed.
   */
  async signInRequested(email: string, returnTo: string | null): Promise<SignInMail | undefined> {
    const memberships = await this.store.memberships(email);
    if (memberships.length === 0 && !this.signupOpen) return undefined;
    // Expired links and sessions go as new ones come: no timer needed.
    const t = this.now();
    await this.store.prune(t, t - IDLE_SECONDS, t - ABSOLUTE_SECONDS);
    return { to: email, url: await this.makeLink({ email, returnTo }) };
  }

  /** An invitation: the user is added now (audited as the inviting owner); the link signs them in, within 7 days. */
  async invite(
    actorEmail: string,
    accountId: string,
    email: unknown,
    role: unknown,
  ): Promise<Result<SignInMail>> {
    // Decided in the write's transaction: the inviter is still an owner, the account still active.
    const added = await this.uses.users.add(accountId, email, role, userActor(actorEmail), {
      byOwner: actorEmail,
      activeAccount: true,
    });
    if (!added.ok) return added;
    const account = await this.deps.store.accounts.get(accountId);
    const url = await this.makeLink({ email: added.value.email, accountId, purpose: 'invite' });
    return ok({
      to: added.value.email,
      url,
      invitedBy: actorEmail,
      ...(account ? { accountName: account.name } : {}),
    });
  }

  /** Whether `token` has the shape of a link's token, base64url as newToken makes them (nothing is looked up). */
  linkShaped(token: unknown): token is string {
    return typeof token === 'string' && LINK_TOKEN.test(token);
  }

  /** Uses the link (once, in time) and opens a session; sign-up happens here when it is open. */
  async followLink(token: unknown): Promise<Result<Followed>> {
    if (!this.linkShaped(token)) return fail('not_found', 'This sign-in link is not valid.');
    const t = this.now();
    const hash = sha256(token);
    const spent = () =>
      fail<Followed>('not_found', 'This sign-in link is not valid, was used already, or has expired.');
    // Looked at before it is used: a link that cannot sign in (its email in no account any more,
    // sign-up closed) is refused unspent; only a sign-in that goes ahead uses it.
    const found = await this.store.findLink(hash, t);
    if (!found) return spent();
    let memberships = await this.store.memberships(found.email);
    if (memberships.length === 0 && !this.signupOpen)
      return fail('not_found', 'This sign-in link is not valid.');
    const link = await this.store.useLink(hash, t);
    if (!link) return spent();
    if (memberships.length === 0) {
      const created = await this.signUp(link.email);
      if (!created.ok) return created;
      memberships = await this.store.memberships(link.email);
    }
    const cookieValue = newToken();
    const sessionId = newId('ses', this.deps.clock.now());
    await this.store.addSession(
      { id: sessionId, tokenHash: sha256(cookieValue), email: link.email, createdAt: t, lastSeenAt: t },
      draftAudit(this.deps, userActor(link.email), 'console.sign_in', link.accountId, sessionId, {
        purpose: link.purpose,
      }),
    );
    const linked = link.accountId && memberships.find((m) => m.accountId === link.accountId);
    const only = memberships.length === 1 ? memberships[0] : undefined;
    const next =
      link.returnTo ??
      (linked ? `/console/a/${linked.accountId}/` : only ? `/console/a/${only.accountId}/` : '/console/');
    return ok({ cookieValue, sessionId, email: link.email, next });
  }

  /** A new account on the sign-up plan, with the email as its owner; both audited as the new user. */
  private async signUp(email: string): Promise<Result<unknown>> {
    const by = userActor(email);
    const account = await this.uses.accounts.create({ name: email, plan: this.options.signupPlan }, by);
    if (!account.ok) return account;
    return this.uses.users.add(account.value.id, email, 'owner', by);
  }

  /** The person behind a session cookie, or undefined (unknown, idle, too old, or no account left). */
  async signedIn(cookieValue: string | undefined): Promise<SignedIn | undefined> {
    if (!cookieValue || cookieValue.length > 100) return undefined;
    const session = await this.store.getSession(sha256(cookieValue));
    if (!session) return undefined;
    const t = this.now();
    if (session.lastSeenAt <= t - IDLE_SECONDS || session.createdAt <= t - ABSOLUTE_SECONDS) {
      await this.store.endSession(session.id);
      return undefined;
    }
    const memberships = await this.store.memberships(session.email);
    if (memberships.length === 0) {
      // Removed from every account: the session ends with the last membership.
      await this.store.endSessionsOf(session.email);
      return undefined;
    }
    if (t - session.lastSeenAt >= TOUCH_EVERY_SECONDS) await this.store.touchSession(session.id, t);
    return { email: session.email, sessionId: session.id, memberships };
  }

  async signOut(who: SignedIn): Promise<void> {
    await this.store.endSession(
      who.sessionId,
      draftAudit(this.deps, userActor(who.email), 'console.sign_out', null, who.sessionId, {}),
    );
  }

  /**
   * The account's use from `from` to `to` by tool and by key, as `toolgate usage report --by tool`
   * and `--by key` count it: the same use case makes both (settled days kept in memory there).
   */
  async usageBreakdown(accountId: string, from: string, to: string): Promise<UsageBreakdown> {
    const billing = this.uses.billing;
    const [byTool, byKey] = await Promise.all([
      billing.groups(accountId, from, to, 'tool'),
      billing.groups(accountId, from, to, 'key'),
    ]);
    const rows = (groups: UsageGroup[]) => groups.map(({ group, ...c }) => ({ group, ...countsView(c) }));
    return { byTool: rows(byTool), byKey: rows(byKey) };
  }

  /** Changes a user's role, within the account (another account's user is not found). */
  async setRole(
    actorEmail: string,
    accountId: string,
    userId: string,
    role: unknown,
  ): Promise<Result<unknown>> {
    const valid = validateUser('x@example.com', role);
    if (!valid.ok) return valid;
    const user = await this.deps.store.users.get(userId);
    if (!user || user.accountId !== accountId) return fail('not_found', `No user "${userId}".`);
    const audit = draftAudit(this.deps, userActor(actorEmail), 'user.role', accountId, userId, {
      email: user.email,
      role: valid.value.role,
    });
    // Decided in the write's transaction (the account's row locked on PostgreSQL): the actor is still
    // an owner, and the account keeps one, whatever another owner did a moment before.
    const updated = await this.deps.store.users.setRole(userId, valid.value.role, audit, {
      byOwner: actorEmail,
      keepAnOwner: true,
    });
    if (typeof updated === 'string') return guardRefusal(updated);
    return updated ? ok(updated) : fail('not_found', `No user "${userId}".`);
  }

  /** Removes a user of the account; their sessions end when it was their last account. */
  async removeUser(actorEmail: string, accountId: string, userId: string): Promise<Result<unknown>> {
    const user = await this.deps.store.users.get(userId);
    if (!user || user.accountId !== accountId) return fail('not_found', `No user "${userId}".`);
    const removed = await this.uses.users.remove(userId, userActor(actorEmail), {
      byOwner: actorEmail,
      keepAnOwner: true,
    });
    if (!removed.ok) return removed;
    if ((await this.store.memberships(user.email)).length === 0) await this.store.endSessionsOf(user.email);
    return removed;
  }
}

/** Where a server is reached when no TOOLGATE_PUBLIC_URL says: its address (a wildcard one as loopback). */
export function defaultPublicUrl(host: string, port: number): string {
  if (host === '0.0.0.0') return `http://127.0.0.1:${port}`;
  if (host === '::' || host === '[::]') return `http://[::1]:${port}`;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
