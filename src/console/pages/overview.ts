/**
 * @module Overview: the account as `get_account` answers it (the same JSON, made by the same view
 * the tool uses): name, plan, status, token balance, and each fair-use window as a bar.
 */
import type { FastifyInstance } from 'fastify';
import type { GetAccountResponse } from '../../service/views.js';
import { accountPage, type ConsolePageDeps, notFound, planLabel } from '../context.js';
import { alertsSection } from './alerts.js';

interface WindowRow {
  category: string;
  unit: string;
  window: string;
  limit: number;
  used: number;
  remaining: number;
  resetsAt: string | null;
}

type WindowViews = Record<
  string,
  Record<
    string,
    Record<
      string,
      Omit<WindowRow, 'category' | 'unit' | 'window' | 'resetsAt'> & { resets_at: string | null }
    >
  >
>;

/** get_account's nested fair_use, one row per window, in the plan's order. */
export function windowRows(fairUse: unknown): WindowRow[] {
  const rows: WindowRow[] = [];
  for (const [category, units] of Object.entries(fairUse as WindowViews))
    for (const [unit, windows] of Object.entries(units))
      for (const [window, w] of Object.entries(windows))
        rows.push({
          category,
          unit,
          window,
          limit: w.limit,
          used: w.used,
          remaining: w.remaining,
          resetsAt: w.resets_at,
        });
  return rows;
}

export async function overviewPage(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  accountPage(
    app,
    deps,
    { path: '', current: 'Overview', template: 'overview' },
    async (accountId, request) => {
      const json = await deps.uses.accountViewJson(accountId);
      if (json === undefined) throw notFound();
      const { results } = JSON.parse(json) as GetAccountResponse;
      return {
        account: results,
        plan: await planLabel(deps, results.plan),
        windows: windowRows(results.fair_use),
        ...(await alertsSection(deps, request)),
      };
    },
  );
}
