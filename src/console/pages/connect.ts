/**
 * @module Connect: the MCP URL and ready snippets for Claude Code, Cursor and claude.ai, and the
 * API reference, rendered on the server from the OpenAPI document /openapi.json serves (the
 * operator's own admin API left out).
 */

import type { FastifyInstance } from 'fastify';
import { brandSlug } from '../../domain/brand.js';
import { accountPage, type ConsolePageDeps } from '../context.js';

export interface Operation {
  method: string;
  path: string;
  summary: string;
  description: string;
}

type PathItem = Record<string, { summary?: string; description?: string; operationId?: string } | undefined>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** The customer's operations of the document: every path but the admin API's, in path order. */
export function operations(document: Record<string, unknown>): Operation[] {
  const paths = (document.paths ?? {}) as Record<string, PathItem>;
  const found: Operation[] = [];
  for (const path of Object.keys(paths).sort()) {
    if (path.startsWith('/admin/')) continue;
    for (const method of METHODS) {
      const op = paths[path]?.[method];
      if (!op) continue;
      found.push({
        method: method.toUpperCase(),
        path,
        summary: op.summary ?? op.operationId ?? '',
        description: op.description ?? '',
      });
    }
  }
  return found;
}

export async function connectPage(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  accountPage(app, deps, { path: 'connect', current: 'Connect', template: 'connect' }, () => {
    const base = deps.service.publicUrl();
    const mcpUrl = `${base}/mcp`;
    // The server's entry in the customer's client config is named after the brand.
    const entry = brandSlug(deps.brand.name);
    const cursor = JSON.stringify(
      { mcpServers: { [entry]: { url: mcpUrl, headers: { Authorization: 'Bearer <your API key>' } } } },
      null,
      2,
    );
    return {
      base,
      mcpUrl,
      claudeCode: `claude mcp add --transport http ${entry} ${mcpUrl} --header "Authorization: Bearer <your API key>"`,
      cursor,
      operations: operations(deps.openapi()),
    };
  });
}
