/**
 * @module Usage: the account's calls over a period it chooses (this billing period, 7, 30 or 90 days)
 * as a chart with a table of the days that had calls, one day of the last seven by the hour, the
 * period by tool and by key, and its days as CSV; a new account sees what will show here instead of
 * rows of zeros. The numbers are get_usage's (7 and 30 days are its week and month) and `toolgate
 * usage report`'s: the same service calls make them.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { nowSeconds } from '../../domain/clock.js';
import { dayOf } from '../../domain/usage-history.js';
import { type DaysView, unitsOf } from '../../service/billing.js';
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
import { formatDay, formatHour } from '../format.js';
import {
  bars,
  CHART,
  chosenDay,
  hourDays,
  PERIODS,
  type PeriodId,
  periodDays,
  periodOf,
} from '../usage-model.js';

type UsageQuery = { period?: string; day?: string };

interface Range {
  accountId: string;
  period: PeriodId;
  today: string;
  usage: DaysView;
  /** The billing period's first day, when the plan has one. */
  billingStart: string | null;
}

/** The chosen period's days, made by the service call get_usage makes them with. */
async function rangeOf(deps: ConsolePageDeps, accountId: string, query: UsageQuery): Promise<Range> {
  const snapshot = await deps.uses.reads.getSnapshot(accountId);
  if (!snapshot) throw notFound();
  const today = dayOf(nowSeconds(deps.uses.clock));
  const start = deps.uses.billing.billing(snapshot, {}).current_period_start;
  const billingStart = start ? start.slice(0, 10) : null;
  const period = periodOf(query.period, billingStart);
  const { from, to } = periodDays(period, today, billingStart);
  return { accountId, period, today, usage: await deps.uses.billing.days(snapshot, from, to), billingStart };
}

const usagePath = (accountId: string, q: Record<string, string>) =>
  `/console/a/${accountId}/usage?${new URLSearchParams(q).toString()}`;

/** The period choices as links (they work without a script), the current one marked. */
function periodLinks(r: Range) {
  return PERIODS.filter((p) => p.id !== 'billing' || r.billingStart !== null).map((p) => ({
    label: p.label,
    href: usagePath(r.accountId, { period: p.id }),
    current: p.id === r.period,
  }));
}

/** One day of the last seven by the hour: 24 bars, and the hours that had calls. */
async function hourly(deps: ConsolePageDeps, r: Range, chosen: unknown) {
  const day = chosenDay(chosen, r.today);
  const hours = await deps.uses.billing.hours(r.accountId, day);
  const byHour = new Map(hours.map((h) => [h.hour, h]));
  const points = Array.from({ length: 24 }, (_, hour) => ({
    label: formatHour(hour),
    calls: byHour.get(hour)?.calls ?? 0,
  }));
  return {
    day,
    days: hourDays(r.today).map((d, i) => ({
      label: i === 0 ? 'Today' : i === 1 ? 'Yesterday' : formatDay(d, true),
      href: `${usagePath(r.accountId, { period: r.period, day: d })}#by-hour`,
      current: d === day,
    })),
    rows: hours.filter((h) => h.calls > 0).map((h) => ({ ...h, label: formatHour(h.hour) })),
    chart: { ...CHART, ...bars(points), first: '00:00', last: '24:00' },
  };
}

async function usageModel(deps: ConsolePageDeps, r: Range, query: UsageQuery) {
  const { usage } = r;
  const [breakdown, keyList] = await Promise.all([
    deps.service.usageBreakdown(r.accountId, usage.start_date, usage.end_date),
    deps.uses.keys.list(r.accountId),
  ]);
  const names = new Map((keyList.ok ? keyList.value : []).map((k) => [k.id, k]));
  const recent = new Set(hourDays(r.today));
  const points = usage.days.map((d) => ({ label: formatDay(d.date), calls: d.calls }));
  return {
    usage,
    periods: periodLinks(r),
    periodLabel: PERIODS.find((p) => p.id === r.period)?.label ?? '',
    dayCount: usage.days.length,
    empty: usage.totals.calls === 0,
    activeDays: usage.days
      .filter((d) => d.calls > 0)
      .reverse()
      .map((d) => ({
        ...d,
        hoursHref: recent.has(d.date)
          ? `${usagePath(r.accountId, { period: r.period, day: d.date })}#by-hour`
          : null,
      })),
    chart: {
      ...CHART,
      ...bars(points),
      first: formatDay(usage.start_date),
      last: formatDay(usage.end_date),
    },
    hourly: usage.totals.calls === 0 ? null : await hourly(deps, r, query.day),
    unitColumns: unitColumnsOf(usage),
    byTool: breakdown.byTool,
    byKey: breakdown.byKey.map((row) => {
      const k = names.get(row.group);
      return { ...row, label: k ? `${k.name ?? 'unnamed'} (${k.hint})` : row.group };
    }),
    csvHref: `/console/a/${r.accountId}/usage.csv?period=${r.period}`,
  };
}

/** A column per unit besides records the period counted (pages), beside Records returned. */
const unitColumnsOf = (usage: DaysView) =>
  unitsOf([usage.totals]).map((unit) => ({
    unit,
    heading: `${unit.charAt(0).toUpperCase()}${unit.slice(1)} returned`,
  }));

const CSV_COLUMNS = ['date', 'calls', 'tokens', 'records', 'with_data', 'without_data', 'failed'] as const;

/** The days as CSV; a column per unit besides records the period counted, after records. */
export function usageCsv(usage: DaysView): string {
  const units = unitsOf([usage.totals]);
  const head = [...CSV_COLUMNS.slice(0, 4), ...units, ...CSV_COLUMNS.slice(4)];
  const lines = [head.join(',')];
  for (const d of usage.days) {
    const cells = CSV_COLUMNS.slice(0, 4).map((c) => String(d[c]));
    for (const u of units) cells.push(String(d.units?.[u] ?? 0));
    for (const c of CSV_COLUMNS.slice(4)) cells.push(String(d[c]));
    lines.push(cells.join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

export async function usagePage(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  const options = { schema: { hide: true, params: ACCOUNT_PARAMS }, preHandler: accountGuard(deps) };
  const idOf = (request: FastifyRequest) => accountOf(request).membership.accountId;

  app.get<{ Params: AccountParams; Querystring: UsageQuery }>(
    '/a/:accountId/usage',
    options,
    async (request, reply) => {
      const query = request.query ?? {};
      const range = await rangeOf(deps, idOf(request), query);
      return renderAccountPage(request, reply, 'Usage', 'usage', await usageModel(deps, range, query));
    },
  );

  app.get<{ Params: AccountParams; Querystring: UsageQuery }>(
    '/a/:accountId/usage.csv',
    options,
    async (request, reply) => {
      const accountId = idOf(request);
      const { usage } = await rangeOf(deps, accountId, request.query ?? {});
      return reply
        .type('text/csv; charset=utf-8')
        .header('cache-control', NO_STORE)
        .header(
          'content-disposition',
          `attachment; filename="usage-${accountId}-${usage.start_date}-${usage.end_date}.csv"`,
        )
        .send(usageCsv(usage));
    },
  );
}
