/**
 * @module The console's few static files (its stylesheet, the copy button's script and its icon),
 * served by toolgate itself from an allow-list, read once: the console works with no internet, and
 * under a Content-Security-Policy of `default-src 'self'`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The console's `views` or `assets` folder: beside this module when run from the sources, and in the
 * sources when run from the build (tsc copies no templates; the package carries src/).
 */
export function consoleDir(sub: 'views' | 'assets'): string {
  const beside = join(here, sub);
  if (existsSync(beside)) return beside;
  return join(here, '..', '..', 'src', 'console', sub);
}

const TYPES: Record<string, string> = {
  'console.css': 'text/css; charset=utf-8',
  'consent.css': 'text/css; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  // Named by every page's <link rel="icon">: browsers then never ask for a /favicon.ico that is not there.
  'favicon.svg': 'image/svg+xml',
};

export async function assetRoutes(app: FastifyInstance): Promise<void> {
  const dir = consoleDir('assets');
  const files = new Map(Object.keys(TYPES).map((name) => [name, readFileSync(join(dir, name))]));
  app.get<{ Params: { name: string } }>(
    '/assets/:name',
    { schema: { hide: true } },
    async (request, reply) => {
      const body = files.get(request.params.name);
      if (!body) return reply.callNotFound();
      return reply
        .type(TYPES[request.params.name]!)
        .header('cache-control', 'public, max-age=3600')
        .send(body);
    },
  );
}
