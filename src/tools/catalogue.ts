/**
 * @module The catalogue a server serves: the live catalogue (service/live-catalogue.ts) building each
 * stored tool into a served tool (catalogue-tool.ts) that forwards through one keep-alive pool of
 * upstream connections. The composition root and the tests open it the same way.
 */

import { allowedVariables } from '../domain/catalogue.js';
import type { Metrics } from '../metrics/metrics.js';
import { LiveCatalogue } from '../service/live-catalogue.js';
import type { CatalogueStore, Warn } from '../store/store.js';
import { Upstreams } from '../upstream/forward.js';
import { buildServedTool, type ServedTool } from './catalogue-tool.js';

export interface ServedCatalogue {
  get(name: string): ServedTool | undefined;
  /** Every tool served, in name order. */
  list(): ServedTool[];
  /** The catalogue revision being served. */
  readonly revision: number;
  /** Serves the stored catalogue now, if it changed (after this process changed it). */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

export interface ServeCatalogueOptions {
  catalogue: CatalogueStore;
  /** Where `${NAME}` in upstream headers is looked up (the process's environment). */
  env: Readonly<Record<string, string | undefined>>;
  /** TOOLGATE_UPSTREAM_ENV: the only variables of `env` a tool may read (toolgate's own never). */
  upstreamEnv: readonly string[];
  warn?: Warn;
  /** How often the stored revision is read, in milliseconds. */
  pollMs?: number;
  /** Most connections kept open to one upstream origin. */
  connections?: number;
  /** Where upstream calls are counted (TOOLGATE_METRICS_PORT). */
  metrics?: Metrics;
}

export async function serveCatalogue(opts: ServeCatalogueOptions): Promise<ServedCatalogue> {
  const upstreams = new Upstreams({
    ...(opts.connections === undefined ? {} : { connections: opts.connections }),
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
  });
  const allowed = allowedVariables(opts.upstreamEnv);
  const ignored = opts.upstreamEnv.filter((name) => !allowed.has(name));
  if (ignored.length > 0)
    opts.warn?.("TOOLGATE_UPSTREAM_ENV lists toolgate's own configuration, which no tool may read", {
      ignored,
    });
  const deps = { upstreams, env: opts.env, allowed };
  const live = new LiveCatalogue<ServedTool>({
    catalogue: opts.catalogue,
    build: (definition) => buildServedTool(definition, opts.warn ? { ...deps, warn: opts.warn } : deps),
    ...(opts.pollMs !== undefined ? { pollMs: opts.pollMs } : {}),
    ...(opts.warn ? { warn: opts.warn } : {}),
  });
  await live.start();
  return {
    get: (name) => live.get(name),
    list: () => live.list(),
    get revision() {
      return live.revision;
    },
    refresh: () => live.refresh(),
    async close() {
      live.stop();
      await upstreams.close();
    },
  };
}
