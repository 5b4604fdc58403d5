/**
 * @module The account tools' use cases: what an account's billing looks like (plan, subscription and
 * its current period, balance, every tool's cost), and what it used, day by day, over a period
 * (the stored history plus this server's counts not written yet). Operators read the same history
 * for any range, by day, key or tool.
 */
import { isUnlimited } from '../domain/accounts.js';
import { isoSeconds } from '../domain/clock.js';
import { fail, ok, type Result } from '../domain/errors.js';
import type { SubscriptionStatus } from '../domain/payments.js';
import {
  addCounts,
  type CountsByUnit,
  dayOf,
  daysBetween,
  historyRange,
  monthlyPeriod,
  type UsageGrouping,
  type UsagePeriod,
  usagePeriodDays,
  zeroCounts,
} from '../domain/usage-history.js';
import { type HourGroup, mergeHours } from '../domain/usage-hours.js';
import type { AccountSnapshot, UsageGroup } from '../store/store.js';
import { now, type ServiceDeps } from './context.js';
import { mergeGroups, SettledUsage } from './settled-usage.js';

/** Counts as the account tools and the admin API show them (snake_case). */
export interface CountsView {
  calls: number;
  tokens: number;
  records: number;
  /** The amounts of tools metered in other units, by unit in name order; absent when none. */
  units?: Record<string, number>;
  with_data: number;
  without_data: number;
  failed: number;
}

/** Usage counts as every answer names them (snake_case); `units` only where a unit besides records was counted. */
export const countsView = (c: CountsByUnit): CountsView => ({
  calls: c.calls,
  tokens: c.tokens,
  records: c.records,
  ...(c.units ? { units: inUnitOrder(c.units) } : {}),
  with_data: c.withData,
  without_data: c.withoutData,
  failed: c.failed,
});

function inUnitOrder(units: Record<string, number>): Record<string, number> {
  const sorted: Record<string, number> = {};
  for (const unit of Object.keys(units).sort()) sorted[unit] = units[unit]!;
  return sorted;
}

/** The units besides records that `rows` counted, in name order: the columns a table adds for them. */
export function unitsOf(rows: readonly Pick<CountsView, 'units'>[]): string[] {
  const units = new Set<string>();
  for (const r of rows) for (const unit of Object.keys(r.units ?? {})) units.add(unit);
  return [...units].sort();
}

export interface BillingView {
  plan: string;
  /**
   * Stripe's status while the account has a Stripe subscription (active, trialing, past_due,
   * unpaid, canceled, incomplete, incomplete_expired, paused); else the account's own status on a
   * monthly plan, or none.
   */
  subscription_status: 'active' | 'suspended' | 'closed' | 'none' | SubscriptionStatus;
  token_balance: number;
  unlimited: boolean;
  current_period_start: string | null;
  current_period_end: string | null;
  /** One figure per tool: per unit counted where it charges per unit, else per call. */
  token_costs: Record<string, number>;
  /** Both figures and the unit: a tool may charge per call and per unit counted. */
  token_cost_details: Record<string, TokenCost>;
}

/**
 * What a tool charges: tokens per call (a hit), plus tokens per unit it counts (`per_record`, named
 * as the seed system has it; per page for a tool metered in pages).
 */
export interface TokenCost {
  per_call: number;
  per_record: number;
  /** The unit `per_record` is per: records, or the tool's own (`metering.unit`, such as pages). */
  unit: string;
}

/** What was used day by day from `start_date` to `end_date` (days without calls included). */
export interface DaysView {
  start_date: string;
  end_date: string;
  token_balance: number;
  days: (CountsView & { date: string })[];
  totals: CountsView;
}

export interface UsageView extends DaysView {
  period: UsagePeriod;
}

export interface HistoryView {
  account_id: string;
  from: string;
  to: string;
  by: UsageGrouping;
  rows: (CountsView & { day?: string; key_id?: string; tool?: string })[];
  totals: CountsView;
}

const balanceOf = (s: AccountSnapshot) => (isUnlimited(s.account, s.plan) ? -1 : s.account.tokenBalance);

export class BillingService {
  /** Settled days' sums, kept a while: made once, with the use cases. */
  private readonly settled: SettledUsage;

  constructor(private readonly deps: ServiceDeps) {
    this.settled = new SettledUsage(deps);
  }

  billing(snapshot: AccountSnapshot, tokenCosts: Record<string, TokenCost>): BillingView {
    const { account, plan } = snapshot;
    const period = this.period(snapshot, now(this.deps));
    const stripe = account.billing?.subscriptionId ? account.billing.status : null;
    return {
      plan: plan.id,
      subscription_status: stripe ?? (period ? account.status : 'none'),
      token_balance: balanceOf(snapshot),
      unlimited: isUnlimited(account, plan),
      current_period_start: period ? isoSeconds(period.start) : null,
      current_period_end: period ? isoSeconds(period.end) : null,
      token_costs: Object.fromEntries(
        Object.entries(tokenCosts).map(([tool, c]) => [tool, c.per_record > 0 ? c.per_record : c.per_call]),
      ),
      token_cost_details: tokenCosts,
    };
  }

  /** The current period: Stripe's while its subscription has one, else the monthly plan's own. */
  private period(snapshot: AccountSnapshot, t: number): { start: number; end: number } | null {
    const { account, plan } = snapshot;
    const b = account.billing;
    if (b?.subscriptionId && b.periodStart !== null && b.periodEnd !== null)
      return { start: b.periodStart, end: b.periodEnd };
    return plan.subscription === 'monthly' ? monthlyPeriod(account.planSince, t) : null;
  }

  async usage(snapshot: AccountSnapshot, period: UsagePeriod): Promise<UsageView> {
    const t = now(this.deps);
    const { from, to } = usagePeriodDays(period, t, this.period(snapshot, t));
    return { period, ...(await this.days(snapshot, from, to)) };
  }

  /** The account's use day by day from `from` to `to` (both included): get_usage's days, for any range. */
  async days(snapshot: AccountSnapshot, from: string, to: string): Promise<DaysView> {
    const { account } = snapshot;
    const byDay = new Map((await this.groups(account.id, from, to, 'day')).map((g) => [g.group, g]));
    const totals = zeroCounts();
    const days = daysBetween(from, to).map((date) => {
      const counts = byDay.get(date) ?? zeroCounts();
      addCounts(totals, counts);
      return { date, ...countsView(counts) };
    });
    return {
      start_date: from,
      end_date: to,
      token_balance: balanceOf(snapshot),
      days,
      totals: countsView(totals),
    };
  }

  /** The admin API's and the CLI's history: any range (30 days to today by default), by day, key or tool. */
  async history(
    accountId: string,
    input: { from?: string; to?: string; by?: string },
  ): Promise<Result<HistoryView>> {
    const by = input.by ?? 'day';
    if (by !== 'day' && by !== 'key' && by !== 'tool') {
      return fail('invalid_arguments', 'by must be day, key or tool.');
    }
    const range = historyRange(dayOf(now(this.deps)), input.from, input.to);
    if (!range.ok) return range;
    if (!(await this.deps.store.accounts.get(accountId)))
      return fail('not_found', `No account "${accountId}".`);
    const { from, to } = range.value;
    const groups = await this.groups(accountId, from, to, by);
    const totals = zeroCounts();
    for (const g of groups) addCounts(totals, g);
    const member = by === 'day' ? 'day' : by === 'key' ? 'key_id' : 'tool';
    let rows: HistoryView['rows'];
    if (by === 'day') {
      // Every day of the range, days without calls included.
      const byDay = new Map(groups.map((g) => [g.group, g]));
      rows = daysBetween(from, to).map((day) => ({ day, ...countsView(byDay.get(day) ?? zeroCounts()) }));
    } else {
      rows = groups.map((g) => ({ [member]: g.group, ...countsView(g) }));
    }
    return ok({ account_id: accountId, from, to, by, rows, totals: countsView(totals) });
  }

  /** The account's hours of `day` that have calls (kept for the last days only), this server's unwritten added in. */
  async hours(accountId: string, day: string): Promise<HourGroup[]> {
    const stored = await this.deps.store.usageHistory.hours(accountId, day);
    return mergeHours(stored, this.deps.usageCounters?.unwrittenHours(accountId, day) ?? []);
  }

  /** The stored groups (settled days from memory), with this server's counts not yet written added in. */
  async groups(accountId: string, from: string, to: string, by: UsageGrouping): Promise<UsageGroup[]> {
    const stored = await this.settled.groups(accountId, from, to, by);
    return mergeGroups(stored, this.deps.usageCounters?.unwritten(accountId, from, to, by) ?? []);
  }
}
