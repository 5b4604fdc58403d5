/**
 * @module proxied: a catalogue tool forwarding to an upstream service, toolgate against a bare
 * Fastify proxy (bench/proxy-baseline.ts) calling the same upstream (bench/upstream.ts) with the same
 * HTTP client. Two scenarios, both selected by `--only proxied`: a metered tool (fair use checked,
 * records counted and committed atomically with every call) and a free one (no metering: what the
 * gateway itself costs on top of the forwarding).
 */
import { cpus } from 'node:os';
import { windowsUsed } from '../lib/admin.js';
import { FREE_TOOL, METERED_TOOL, proxiedFixture, RECORDS_PER_CALL } from '../lib/proxied.js';
import type { Note, Scenario } from './scenario.js';

const BODY = '{"q":"x"}';

function proxied(id: string, tool: string, metered: boolean, target: number): Scenario {
  return {
    id,
    group: 'proxied',
    title: `proxied ${metered ? 'metered' : 'free'}`,
    description: `POST /api/v1/tools/${tool} ${BODY} with a bearer API key, rotating over every seeded key: ${metered ? 'a metered catalogue tool (category search, 10 records a call, 0 tokens)' : 'a free catalogue tool (no metering)'} forwarding to the bench's upstream; the baseline forwards to the same upstream with toolgate's own undici client`,
    rotates: 'key',
    target,
    // The targets are toolgate's on SQLite; on PostgreSQL the figures are shown, not judged.
    targetBackend: 'sqlite',
    prepare: (f) => proxiedFixture(f, tool, metered),
    requests: (f) =>
      f.accounts.map((a) => ({
        method: 'POST',
        path: `/api/v1/tools/${tool}`,
        headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
        body: BODY,
      })),
    check(body) {
      const b = body as {
        status?: unknown;
        results?: unknown;
        metadata?: { fair_use?: unknown; tokens_charged?: unknown };
      } | null;
      if (b?.status !== 'ok') return `status is ${JSON.stringify(b?.status)}, not "ok"`;
      if (!Array.isArray(b.results) || b.results.length !== RECORDS_PER_CALL)
        return `results is not the upstream's ${RECORDS_PER_CALL} results`;
      if (b.metadata?.tokens_charged !== 0) return 'metadata.tokens_charged is not 0';
      if (metered !== (b.metadata?.fair_use !== undefined))
        return metered
          ? 'metadata.fair_use is missing (the tool is not metered)'
          : 'a free tool answered fair_use';
      return null;
    },
    async afterwards(f, totals) {
      const notes: Note[] = [
        {
          level: 'info',
          text: `one upstream process (node:http, a precomputed ~1 KB answer) serves both sides; it, the server under test and wrk share the ${cpus().length} cores, unpinned (the bench pins nothing): the upstream's CPU is measured and shown beside the server's`,
        },
      ];
      if (!metered) return notes;
      // The polls that waited for the tool to be served counted one call more than the load.
      const expected = totals.ok + 1;
      // The metered tool's calls add up: its `search` windows against the 2xx answers, 10 records each.
      const { requests, records } = await windowsUsed(
        f.toolgate.url,
        f.toolgate.adminToken,
        f.accounts,
        'search',
      );
      const slack = totals.runs * totals.connections;
      const extra = requests - expected;
      if (extra < 0 || extra > slack)
        notes.push({
          level: 'warning',
          text: `toolgate counted ${requests} metered calls for ${expected} 2xx answers (at most ${slack} more can be answered after the runs stop)`,
        });
      else
        notes.push({
          level: 'info',
          text: `metering adds up: toolgate counted ${requests} calls for ${expected} 2xx answers (+${extra} answered after a run stopped; at most ${slack})`,
        });
      if (records !== requests * RECORDS_PER_CALL)
        notes.push({
          level: 'warning',
          text: `toolgate counted ${records} records for ${requests} calls, not ${RECORDS_PER_CALL} a call`,
        });
      return notes;
    },
  };
}

export const proxiedMetered = proxied('proxied_metered', METERED_TOOL, true, 0.8);
export const proxiedFree = proxied('proxied_free', FREE_TOOL, false, 0.9);
