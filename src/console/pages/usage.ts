/**
 * @module Usage: calls per day for 30 days (a server-made SVG chart, with the table beside it), by
 * tool and by key, and the days as CSV. The numbers are get_usage's (period month) and `toolgate
 * usage report`'s: the same service calls make them.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { UsageView } from '../../service/billing.js';
import type { BreakdownRow } from '../../service/console.js';
import {
  ACCOUNT_PARAMS,
  type AccountParams,
  accountGuard,
  accountOf,
  type ConsolePageDeps,
  NO_STORE,
  notFound,
  renderAccountPage,
} from '../context.js';

const CHART = { width: 720, height: 180, top: 10, bottom: 24, left: 40 };

export interface Bar {
  date: string;
  calls: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The chart's bars, scaled to the busiest day (a day without calls has a zero-height bar). */
export function bars(days: UsageView['days']): { bars: Bar[]; max: number } {
  const max = Math.max(1, ...days.map((d) => d.calls));
  const plot = CHART.height - CHART.top - CHART.bottom;
  const step = (CHART.width - CHART.left) / Math.max(1, days.length);
  return {
    max,
    bars: days.map((d, i) => {
      const height = Math.round((d.calls / max) * plot);
      return {
        date: d.date,
        calls: d.calls,
        x: Math.round(CHART.left + i * step + 2),
        y: CHART.top + plot - height,
        width: Math.max(1, Math.round(step - 4)),
        height,
      };
    }),
  };
}

interface UsageModel {
  usage: UsageView;
  byTool: BreakdownRow[];
  byKey: (BreakdownRow & { label: string })[];
}

/** get_usage's month: the 30 days ending today, made by the same service call. */
async function monthOf(deps: ConsolePageDeps, accountId: string): Promise<UsageView> {
  const snapshot = await deps.uses.reads.getSnapshot(accountId);
  if (!snapshot) throw notFound();
  return deps.uses.billing.usage(snapshot, 'month');
}

async function usageOf(deps: ConsolePageDeps, accountId: string): Promise<UsageModel> {
  const usage = await monthOf(deps, accountId);
  const [breakdown, keyList] = await Promise.all([
    deps.service.usageBreakdown(accountId, usage.start_date, usage.end_date),
    deps.uses.keys.list(accountId),
  ]);
  const names = new Map((keyList.ok ? keyList.value : []).map((k) => [k.id, k]));
  return {
    usage,
    byTool: breakdown.byTool,
    byKey: breakdown.byKey.map((r) => {
      const k = names.get(r.group);
      return { ...r, label: k ? `${k.name ?? 'unnamed'} (${k.hint})` : r.group };
    }),
  };
}

const CSV_COLUMNS = ['date', 'calls', 'tokens', 'records', 'with_data', 'without_data', 'failed'] as const;

export function usageCsv(usage: UsageView): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const d of usage.days) lines.push(CSV_COLUMNS.map((c) => String(d[c])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

export async function usagePage(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  const options = { schema: { hide: true, params: ACCOUNT_PARAMS }, preHandler: accountGuard(deps) };
  const idOf = (request: FastifyRequest) => accountOf(request).membership.accountId;

  app.get<{ Params: AccountParams }>('/a/:accountId/usage', options, async (request, reply) => {
    const accountId = idOf(request);
    const model = await usageOf(deps, accountId);
    return renderAccountPage(request, reply, 'Usage', 'usage', {
      ...model,
      chart: { ...CHART, ...bars(model.usage.days) },
      csvHref: `/console/a/${accountId}/usage.csv`,
    });
  });

  app.get<{ Params: AccountParams }>('/a/:accountId/usage.csv', options, async (request, reply) => {
    const accountId = idOf(request);
    const usage = await monthOf(deps, accountId);
    return reply
      .type('text/csv; charset=utf-8')
      .header('cache-control', NO_STORE)
      .header(
        'content-disposition',
        `attachment; filename="usage-${accountId}-${usage.start_date}-${usage.end_date}.csv"`,
      )
      .send(usageCsv(usage));
  });
}
