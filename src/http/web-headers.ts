/**
 * @module The security headers of every page and answer a person's browser gets (the console, the
 * consent page, OAuth's endpoints and metadata), redirects and errors included: @fastify/helmet's,
 * with one Content-Security-Policy that no page may frame, HSTS only when the public URL is https,
 * and a Permissions-Policy that turns off what no page here uses. Registered on a scope, set in its
 * onRequest hook on the raw response, so that answers written past Fastify (the OAuth library's)
 * carry them too.
 */
import helmet, { type FastifyHelmetOptions } from '@fastify/helmet';
import type { FastifyInstance, FastifyReply } from 'fastify';

export const PERMISSIONS_POLICY = 'camera=(), geolocation=(), microphone=(), payment=(), usb=()';

const directives = (formAction: string[] = []) => ({
  defaultSrc: ["'self'"],
  baseUri: ["'self'"],
  formAction: ["'self'", ...formAction],
  frameAncestors: ["'none'"],
  objectSrc: ["'none'"],
});

/** The CSP, with `formAction` sources allowed besides 'self'. */
export const contentSecurityPolicy = (formAction?: string[]) =>
  ({ useDefaults: false, directives: directives(formAction) }) as const;

function helmetOptions(https: boolean): FastifyHelmetOptions {
  return {
    global: true,
    contentSecurityPolicy: contentSecurityPolicy(),
    // Over plain http a browser ignores HSTS; sent there it would only mislead (and pin a host that has no https).
    strictTransportSecurity: https ? { maxAge: 365 * 24 * 3600, includeSubDomains: false } : false,
  };
}

/** Registers the headers on `scope` (before any other onRequest hook of it: register this first). */
export async function webHeaders(scope: FastifyInstance, opts: { https: boolean }): Promise<void> {
  await scope.register(helmet, helmetOptions(opts.https));
  scope.addHook('onRequest', async (_request, reply) => {
    reply.raw.setHeader('permissions-policy', PERMISSIONS_POLICY);
  });
}

/** This answer's form may also post to (and be redirected to) `sources`. */
export function allowFormAction(reply: FastifyReply, sources: string[]): void {
  void reply.helmet({ contentSecurityPolicy: contentSecurityPolicy(sources) });
}
