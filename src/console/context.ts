/**
 * @module What every console page shares: the signed-in person and the account in the URL (any
 * account they do not belong to is 404, as is any path that does not exist), owner-only pages, the
 * layout's data (navigation, sign-out form, the CSRF token every form carries), and error pages.
 */
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  preHandlerHookHandler,
} from 'fastify';
import type { Logger } from 'pino';
import type { AccountStatus } from '../domain/accounts.js';
import { errorStatus } from '../domain/api-error.js';
import type { Brand } from '../domain/brand.js';
import type { Clock } from '../domain/clock.js';
import type { AlertService } from '../service/alerts.js';
import type { BillingService, TokenCost } from '../service/billing.js';
import type { ConsoleService } from '../service/console.js';
import type { KeyService } from '../service/keys.js';
import type { PaymentService } from '../service/payments.js';
import type { PlanService } from '../service/plans.js';
import type { UserService } from '../service/users.js';
import type { Reads } from '../store/cached-reads.js';
import { FORMATTERS } from './format.js';
import type { Membership, SignedIn } from './identity.js';
import type { CookieIdentity } from './identity-impl.js';
import type { Mailer } from './mailer.js';
import type { ConnectedApps, Consent } from './ports.js';

/** What the console's pages use of the services, and nothing more (the Services object answers it). */
export interface ConsoleUses {
  keys: Pick<KeyService, 'list' | 'create' | 'revoke'>;
  users: Pick<UserService, 'list'>;
  alerts: Pick<AlertService, 'mailsOn' | 'setMailsOn'>;
  billing: Pick<BillingService, 'billing' | 'days' | 'hours'>;
  payments: Pick<PaymentService, 'offers' | 'checkout' | 'portal' | 'pageOrigins'>;
  plans: Pick<PlanService, 'get'>;
  reads: Pick<Reads, 'getSnapshot'>;
  clock: Clock;
  /** The `get_account` answer as JSON, as the tools API gives it. */
  accountViewJson(accountId: string): string | undefined | Promise<string | undefined>;
}

export interface ConsolePageDeps {
  service: ConsoleService;
  uses: ConsoleUses;
  identity: CookieIdentity;
  mailer: Mailer;
  tokenCosts: () => Record<string, TokenCost>;
  openapi: () => Record<string, unknown>;
  connectedApps: ConnectedApps;
  /** The address customers reach the console at (where Stripe sends them back to). */
  publicUrl: () => string;
  /** What customers see instead of toolgate. */
  brand: Brand;
  /** The OAuth authorization the consent page answers; none: OAuth is off, and so is the page. */
  consent?: Consent;
  logger?: Logger;
}

/** A page of one account, as the signed-in person sees it. */
export interface AccountContext {
  who: SignedIn;
  membership: Membership;
  owner: boolean;
  /** The account's status as of this request: the layout says when it is suspended or closed. */
  status: AccountStatus;
}

export type AccountParams = { accountId: string };

/** Account ids are short; anything longer is no account's (and never reaches the database). */
export const ACCOUNT_PARAMS = {
  type: 'object',
  properties: { accountId: { type: 'string', maxLength: 64 } },
  required: ['accountId'],
} as const;

/** The params of a route under an account that names one more of its things (a key, a user, a grant). */
export function accountThingParams(name: string, maxLength = 64) {
  return {
    type: 'object',
    properties: { accountId: { type: 'string', maxLength: 64 }, [name]: { type: 'string', maxLength } },
    required: ['accountId', name],
  } as const;
}

const CONTEXT = Symbol('console.account');
type WithContext = FastifyRequest & { [CONTEXT]?: AccountContext };

export function accountOf(request: FastifyRequest): AccountContext {
  const ctx = (request as WithContext)[CONTEXT];
  if (!ctx) throw new Error('console page without its account guard');
  return ctx;
}

/** An error page's answer: 404 and the like, rendered with its message (which says why). */
export class PageError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** The page's heading; by default one for the status. */
    readonly title?: string,
  ) {
    super(message);
  }
}

export const notFound = () => new PageError(404, 'There is no such page.');

/**
 * A member at an owner's page or action: told so, since they belong to the account and may ask an
 * owner (another account's pages stay 404: those say nothing of what is there).
 */
export const ownersOnlyPage = (accountName: string) =>
  new PageError(
    403,
    `This page is for the owners of ${accountName}: your role there is member. Ask an owner if you need something done here.`,
    'For owners only',
  );

/**
 * Signed in (else to sign-in and back), a user of the URL's account (else 404), and an owner when
 * `ownersOnly` (else 403, saying the page is for owners).
 */
export function accountGuard(deps: ConsolePageDeps, ownersOnly = false): preHandlerHookHandler {
  return async (request, reply) => {
    const who = await deps.identity.who(request);
    if (!who) {
      deps.identity.redirectToSignIn(reply, request.method === 'GET' ? request.url : '/console/');
      return reply;
    }
    const { accountId } = request.params as AccountParams;
    const membership = who.memberships.find((m) => m.accountId === accountId);
    if (!membership) throw notFound();
    const owner = membership.role === 'owner';
    const status = (await deps.uses.reads.getSnapshot(accountId))?.account.status ?? 'active';
    (request as WithContext)[CONTEXT] = { who, membership, owner, status };
    // After the context is set: the refusal is rendered in the account's layout.
    if (ownersOnly && !owner) throw ownersOnlyPage(membership.accountName);
  };
}

const BINDING = Symbol('console.csrfBinding');
type WithBinding = FastifyInstance & { [BINDING]?: (request: FastifyRequest) => string };

/**
 * CSRF by construction: every POST, PUT, PATCH and DELETE of the console's routes is checked
 * (@fastify/csrf-protection's token, bound to `binding`: the session) before any route's own
 * guards run; no route opts in or out. Forms carry the token through the `csrf-field` partial.
 */
export function csrfOnUnsafeMethods(
  app: FastifyInstance,
  binding: (request: FastifyRequest) => string,
): void {
  (app as WithBinding)[BINDING] = binding;
  app.addHook('preHandler', (request, reply, done) => {
    // An unknown path is the not-found page's, whatever the method.
    if (SAFE_METHODS.has(request.method) || request.routeOptions.url === undefined) return done();
    app.csrfProtection(request, reply, done);
  });
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The CSRF token of the page this reply renders (every render has one: the layout's forms need it). */
function csrfToken(reply: FastifyReply): string {
  const binding = (reply.server as WithBinding)[BINDING];
  const userInfo = binding ? binding(reply.request) : '';
  return reply.generateCsrf({ userInfo });
}

export interface NavItem {
  name: string;
  href: string;
  current: boolean;
}

const PAGES = [
  { name: 'Overview', path: '', ownersOnly: false },
  { name: 'Usage', path: 'usage', ownersOnly: false },
  { name: 'API keys', path: 'keys', ownersOnly: false },
  { name: 'Billing', path: 'billing', ownersOnly: false },
  { name: 'Members', path: 'members', ownersOnly: true },
  { name: 'Connect', path: 'connect', ownersOnly: false },
  { name: 'Connected apps', path: 'connected-apps', ownersOnly: false },
] as const;

export type PageName = (typeof PAGES)[number]['name'];

/** A person's pages (a new key among them) are kept by no cache, the browser's included. */
export const NO_STORE = 'no-store';

export const accountPath = (accountId: string, path = '') => `/console/a/${accountId}/${path}`;

/**
 * A page of one account that only reads: GET `/a/:accountId/<path>` for any of its members (the
 * guard answers 404 to anyone else), rendered as `template` with what `data` makes for the account.
 */
export function accountPage(
  app: FastifyInstance,
  deps: ConsolePageDeps,
  page: { path: string; current: PageName; template: string },
  data: (
    accountId: string,
    request: FastifyRequest,
  ) => Promise<Record<string, unknown>> | Record<string, unknown>,
): void {
  app.get<{ Params: AccountParams }>(
    `/a/:accountId/${page.path}`,
    { schema: { hide: true, params: ACCOUNT_PARAMS }, preHandler: accountGuard(deps) },
    async (request, reply) => {
      const { accountId } = accountOf(request).membership;
      return renderAccountPage(request, reply, page.current, page.template, await data(accountId, request));
    },
  );
}

/**
 * Renders `template` in the layout of an account's pages, with the navigation (`current` marked;
 * null: none, as on an error page) and the sign-out form.
 */
export async function renderAccountPage(
  request: FastifyRequest,
  reply: FastifyReply,
  current: PageName | null,
  template: string,
  data: Record<string, unknown>,
  status = 200,
): Promise<FastifyReply> {
  const ctx = accountOf(request);
  const accountId = ctx.membership.accountId;
  const nav: NavItem[] = PAGES.filter((p) => !p.ownersOnly || ctx.owner).map((p) => ({
    name: p.name,
    href: accountPath(accountId, p.path),
    current: p.name === current,
  }));
  const html = await reply.viewAsync(template, {
    ...FORMATTERS,
    title: current ?? '',
    nav,
    email: ctx.who.email,
    accountName: ctx.membership.accountName,
    accountId,
    role: ctx.membership.role,
    owner: ctx.owner,
    accountStatus: ctx.status,
    several: ctx.who.memberships.length > 1,
    csrf: csrfToken(reply),
    ...data,
  });
  return reply.code(status).type('text/html; charset=utf-8').header('cache-control', NO_STORE).send(html);
}

/** Renders a page outside any account (sign-in, the chooser, consent, errors). */
export async function renderPlainPage(
  reply: FastifyReply,
  template: string,
  data: Record<string, unknown>,
  status = 200,
): Promise<FastifyReply> {
  const html = await reply.viewAsync(template, {
    ...FORMATTERS,
    nav: [],
    email: null,
    csrf: csrfToken(reply),
    ...data,
  });
  return reply.code(status).type('text/html; charset=utf-8').header('cache-control', NO_STORE).send(html);
}

/** A plan as customers see it: its display name, else its id; and its description. */
export async function planLabel(
  deps: Pick<ConsolePageDeps, 'uses'>,
  planId: string,
): Promise<{ name: string; description: string | null }> {
  const plan = await deps.uses.plans.get(planId);
  return plan.ok
    ? { name: plan.value.name ?? plan.value.id, description: plan.value.description }
    : { name: planId, description: null };
}

const TITLES: Record<number, string> = {
  400: 'Not possible',
  403: 'Refused',
  404: 'Not found',
  409: 'Not possible',
};

/** What an error page says: a PageError says why; anything else, what its status means. */
function errorPage(err: FastifyError, status: number): { title: string; message: string } {
  if (err instanceof PageError)
    return { title: err.title ?? TITLES[status] ?? 'Not possible', message: err.message };
  const message =
    status === 403
      ? 'This form has expired or did not come from this site. Go back, reload the page and try again.'
      : status === 404
        ? 'There is no such page.'
        : status >= 500
          ? 'Something went wrong on our side. Try again in a moment.'
          : 'The request could not be handled.';
  return { title: status >= 500 ? 'Something went wrong' : (TITLES[status] ?? 'Not possible'), message };
}

/** Errors and unknown paths as pages, not the API's JSON; within an account, in its layout. */
export function installPageHandlers(app: FastifyInstance, deps: ConsolePageDeps): void {
  app.setErrorHandler(async (err: FastifyError, request, reply) => {
    const given = err.statusCode ?? 0;
    const status = given >= 400 && given < 500 ? given : errorStatus(err);
    if (status >= 500) (deps.logger ?? request.log).error({ err }, 'console page failed');
    const page = { ...errorPage(err, status), status };
    if ((request as WithContext)[CONTEXT])
      return renderAccountPage(request, reply, null, 'error', page, status);
    return renderPlainPage(reply, 'error', page, status);
  });
  app.setNotFoundHandler(async (_request, reply) =>
    renderPlainPage(
      reply,
      'error',
      { title: 'Not found', status: 404, message: 'There is no such page.' },
      404,
    ),
  );
}
