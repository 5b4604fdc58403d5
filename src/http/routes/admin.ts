/**
 * @module The admin API under /admin/v1, behind the bearer TOOLGATE_ADMIN_TOKEN (compared in
 * constant time). It is not registered at all when no token is configured; API keys never open it.
 * Every handler acts as the token's name, so every change it makes is in the audit trail.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { AdminToken } from '../../config.js';
import { ApiError } from '../../domain/api-error.js';
import { type AuditContext, actingAs } from '../../service/audit.js';
import type { ConsoleService } from '../../service/console.js';
import type { Services } from '../../service/index.js';
import { bearer, sameDigest, secretDigest } from '../auth.js';
import type { RateLimits } from '../rate-limit.js';
import { refuseUnstorable } from '../storable.js';
import { adminAccountRoutes } from './admin-accounts.js';
import { adminAuditRoutes } from './admin-audit.js';
import { adminConsoleRoutes } from './admin-console.js';
import { adminKeyRoutes } from './admin-keys.js';
import { adminPaymentRoutes, type ReturnUrl } from './admin-payments.js';
import { adminPlanRoutes } from './admin-plans.js';
import { adminTokenRoutes } from './admin-tokens.js';
import { adminToolRoutes } from './admin-tools.js';
import { adminToolImportRoutes } from './admin-tools-import.js';
import { adminUsageRoutes } from './admin-usage.js';
import { adminUserRoutes } from './admin-users.js';
import { adminWebhookTestRoutes } from './admin-webhook-test.js';
import { adminWebhookRoutes } from './admin-webhooks.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is acting on the admin API: `admin:<token name>`. */
    acting: AuditContext | null;
  }
}

export async function adminRoutes(
  instance: FastifyInstance,
  opts: {
    services: Services;
    adminTokens: readonly AdminToken[];
    limits?: RateLimits;
    /** The console's links (POST /console/links); none while the console is off. */
    consoleLinks?: ConsoleService;
    /** Where Stripe's portal sends a customer back to (the console's Billing page). */
    billingReturn: ReturnUrl;
  },
) {
  // Typed by the schemas: each handler's body, params and query are what its schema validated.
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { services, adminTokens } = opts;
  app.decorateRequest('acting', null);

  // Each token's actor made once: the same object every request, so looking it up hashes nothing.
  const expected = adminTokens.map((t) => ({
    acting: actingAs(`admin:${t.name}`),
    digest: secretDigest(t.token),
  }));

  // The presented strings that matched a token, with its actor: a token already known costs a
  // lookup, not a digest. Only a string equal to a configured token gets in, so this holds no more
  // than the tokens.
  const matched = new Map<string, AuditContext>();
  app.addHook('onRequest', (request, reply, done) => {
    try {
      opts.limits?.beforeAdminAuth(request);
    } catch (err) {
      done(err as Error);
      return;
    }
    const presented = bearer(request.headers.authorization);
    let acting = presented ? matched.get(presented) : undefined;
    if (!acting) {
      // Every token is compared, in constant time, so the time taken says nothing about which matched.
      const digest = secretDigest(presented ?? '');
      for (const e of expected) if (sameDigest(digest, e.digest) && presented) acting = e.acting;
      if (acting && presented) matched.set(presented, acting);
    }
    if (!acting) {
      opts.limits?.adminAuthFailed(request, reply);
      done(new ApiError('invalid_admin_token'));
      return;
    }
    request.acting = acting;
    done();
  });
  // Once for every admin route, before its schema: what PostgreSQL could not store is refused on both backends.
  app.addHook('preValidation', refuseUnstorable);

  for (const routes of [
    adminAccountRoutes,
    adminKeyRoutes,
    adminUserRoutes,
    adminTokenRoutes,
    adminUsageRoutes,
    adminPlanRoutes,
    adminAuditRoutes,
    adminToolImportRoutes,
    adminToolRoutes,
    adminWebhookRoutes,
    adminWebhookTestRoutes,
  ])
    routes(app, services);
  adminPaymentRoutes(app, services, opts.billingReturn);
  if (opts.consoleLinks) adminConsoleRoutes(app, opts.consoleLinks);
}
