/**
 * @module Which path parameter a URL the router could not decode holds badly (`%ED%A0%80`, an
 * encoded surrogate, or `%zz`), so that its 400 names the field as every other 400 does.
 */
import type { FastifyRequest } from 'fastify';

const MARKER = '\u{1F6AB}';

/** The name of the route parameter the first undecodable segment of the request's path stands in for, if any. */
export function undecodableParam(request: FastifyRequest): string | undefined {
  const url = request.url;
  const q = url.indexOf('?');
  let marked = false;
  const path = (q < 0 ? url : url.slice(0, q))
    .split('/')
    .map((segment) => {
      try {
        decodeURIComponent(segment);
        return segment;
      } catch {
        marked = true;
        // The router's find() takes a path as its lookup has decoded it: the marker as it is.
        return MARKER;
      }
    })
    .join('/');
  if (!marked) return undefined;
  const route = request.server.findRoute({ method: request.method as 'GET', url: path });
  const params = (route?.params ?? {}) as Record<string, string | undefined>;
  return Object.keys(params).find((name) => params[name]?.includes(MARKER));
}
