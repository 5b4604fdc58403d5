/**
 * @module The console: registers the customers' web pages under /console on the app, the OAuth
 * consent page among them, in a scope of their own (cookies, forms, CSRF on every unsafe method,
 * views and the security headers apply to it alone: the API's hot routes pay nothing).
 */
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import view from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Brand } from '../domain/brand.js';
import { webHeaders } from '../http/web-headers.js';
import type { TokenCost } from '../service/billing.js';
import type { ConsoleService } from '../service/console.js';
import { assetRoutes, consoleDir } from './assets.js';
import { brandRoutes, brandView } from './brand.js';
import {
  type ConsolePageDeps,
  type ConsoleUses,
  csrfOnUnsafeMethods,
  installPageHandlers,
} from './context.js';
import { escapeHtml } from './escape.js';
import type { ConsoleIdentity } from './identity.js';
import { CookieIdentity, cookieNames, cookieOptions } from './identity-impl.js';
import { logMailer, type Mailer, noMailer, smtpMailer } from './mailer.js';
import { alertsPage } from './pages/alerts.js';
import { billingPage } from './pages/billing.js';
import { connectPage } from './pages/connect.js';
import { connectedAppsPage } from './pages/connected-apps.js';
import { consentPage } from './pages/consent.js';
import { keysPage } from './pages/keys.js';
import { membersPage } from './pages/members.js';
import { overviewPage } from './pages/overview.js';
import { signInPages } from './pages/sign-in.js';
import { usagePage } from './pages/usage.js';
import { type ConnectedApps, type Consent, NO_CONNECTED_APPS } from './ports.js';

export type { ConsoleIdentity, SignedIn } from './identity.js';
export type { CookieIdentity } from './identity-impl.js';
export type { ConnectedApp, ConnectedApps, Consent, PendingConsent } from './ports.js';

/** What the operator configures (TOOLGATE_PUBLIC_URL, TOOLGATE_SMTP_*, TOOLGATE_CONSOLE_SIGNUP*). */
export interface ConsoleSettings {
  /** The public base URL: links in mails, the MCP URL shown; read when needed (a test's port is known late). */
  publicUrl: () => string;
  smtpUrl?: string;
  smtpFrom?: string;
  signup?: 'open' | 'closed';
  signupPlan?: string;
  /** NODE_ENV=production: without SMTP, links are never logged. */
  production?: boolean;
  /** The mailer to use, wins over smtpUrl: the server makes it once (the alert mails share it), or a test. */
  mailer?: Mailer;
}

export interface ConsoleDeps {
  /** The console's use cases (sign-in links, sessions, memberships). */
  service: ConsoleService;
  /** What the pages use of the other use cases. */
  uses: ConsoleUses;
  settings: ConsoleSettings;
  /** What each tool costs (the registry's), for the Billing page. */
  tokenCosts: () => Record<string, TokenCost>;
  /** The OpenAPI document /openapi.json serves, for the Connect page's API reference. */
  openapi: () => Record<string, unknown>;
  logger?: Logger;
  /** The OAuth grants for "Connected apps"; none until OAuth provides them. */
  connectedApps?: ConnectedApps;
  /** The OAuth authorization for the consent page (/console/consent/:uid); none: no such page. */
  consent?: Consent;
  /** Who is signed in, when not the console's own sessions (a test's stand-in). */
  identity?: ConsoleIdentity;
  /** What customers see: the name in every header, title and mail, the logo, the accent colour. */
  brand: Brand;
}

/** The console's mailer: the one given, SMTP, the log (not in production), or none that sends. */
export async function makeMailer(
  settings: ConsoleSettings,
  brand: Brand,
  logger: Logger | undefined,
): Promise<Mailer> {
  if (settings.mailer) return settings.mailer;
  if (settings.smtpUrl)
    return smtpMailer(settings.smtpUrl, settings.smtpFrom ?? `${brand.name} <no-reply@localhost>`, brand);
  const log = logger ?? { info: () => {}, warn: () => {} };
  return settings.production ? noMailer(log as Logger) : logMailer(log as Logger);
}

/** Registers /console (and its assets) and answers who is signed in, for the admin API's links. */
export async function registerConsole(app: FastifyInstance, deps: ConsoleDeps): Promise<CookieIdentity> {
  const { service } = deps;
  const https = deps.settings.publicUrl().startsWith('https://');
  const names = cookieNames(https);
  const identity = new CookieIdentity(service, names, deps.identity && ((r) => deps.identity!.who(r)));
  const mailer = await makeMailer(deps.settings, deps.brand, deps.logger);
  app.addHook('onClose', async () => mailer.close?.());
  const pageDeps: ConsolePageDeps = {
    service,
    uses: deps.uses,
    identity,
    mailer,
    tokenCosts: deps.tokenCosts,
    openapi: deps.openapi,
    connectedApps: deps.connectedApps ?? NO_CONNECTED_APPS,
    publicUrl: deps.settings.publicUrl,
    brand: deps.brand,
    ...(deps.consent ? { consent: deps.consent } : {}),
    ...(deps.logger ? { logger: deps.logger } : {}),
  };
  await app.register(
    async (scope) => {
      await webHeaders(scope, { https });
      await scope.register(cookie);
      await scope.register(formbody, { bodyLimit: 16 * 1024 });
      await scope.register(csrf, {
        cookieKey: names.csrf,
        cookieOpts: cookieOptions(names),
        // Every server of a deployment checks the tokens of the others: the key comes from the secret they share.
        csrfOpts: {
          hmacKey: service.derivedKey('toolgate-console:csrf'),
        },
        getUserInfo: (request) => identity.csrfBinding(request),
      });
      csrfOnUnsafeMethods(scope, (request) => identity.csrfBinding(request));
      await scope.register(view, {
        engine: { eta: new Eta({ autoEscape: true, escapeFunction: escapeHtml, cache: true }) },
        templates: consoleDir('views'),
        // Every page's layout names the brand.
        defaultContext: { brand: brandView(deps.brand) },
        // Templates compiled once and kept, whatever NODE_ENV says (@fastify/view's default follows it).
        production: true,
      });
      installPageHandlers(scope, pageDeps);
      await registerPages(scope, pageDeps);
    },
    { prefix: '/console' },
  );
  return identity;
}

async function registerPages(scope: FastifyInstance, pageDeps: ConsolePageDeps): Promise<void> {
  await scope.register(assetRoutes);
  await scope.register(brandRoutes, { brand: pageDeps.brand });
  await scope.register(signInPages, pageDeps);
  await scope.register(overviewPage, pageDeps);
  await scope.register(alertsPage, pageDeps);
  await scope.register(usagePage, pageDeps);
  await scope.register(keysPage, pageDeps);
  await scope.register(billingPage, pageDeps);
  await scope.register(membersPage, pageDeps);
  await scope.register(connectPage, pageDeps);
  await scope.register(connectedAppsPage, pageDeps);
  if (pageDeps.consent) await scope.register(consentPage, { ...pageDeps, consent: pageDeps.consent });
}
