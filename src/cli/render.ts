/** @module Rendering an account for people: its fields, and each fair-use window as a text bar. */
import type { AccountRecord, FairUse, FairUseWindow } from '../client/types.js';
import { balanceText, fields } from './output.js';

const BAR_WIDTH = 10;

/** `[####------]`: the used share of the limit, never empty once something is used, full only at the limit. */
export function bar(used: number, limit: number, width = BAR_WIDTH): string {
  let filled = limit > 0 ? Math.round((used / limit) * width) : used > 0 ? width : 0;
  if (used > 0 && filled === 0) filled = 1;
  if (used < limit && filled === width) filled = width - 1;
  filled = Math.max(0, Math.min(width, filled));
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

export function windowLine(label: string, w: FairUseWindow, labelWidth = label.length): string {
  const when = w.resets_at === null ? 'not running' : `resets ${w.resets_at}`;
  return `${label.padEnd(labelWidth)}  ${bar(w.used, w.limit)}  ${w.used}/${w.limit} used, ${w.remaining} left, ${when}`;
}

/** One line per window of the categories present, in the answer's order, labels aligned. */
export function fairUseLines(fairUse: Partial<FairUse>, indent = '  '): string[] {
  const rows: Array<[string, FairUseWindow]> = [];
  // Every category, unit and window the answer has, in its order (the plan's): the defaults' or
  // meters of the operator's own alike.
  const meters = fairUse as Record<string, Record<string, Record<string, FairUseWindow>> | undefined>;
  for (const [category, units] of Object.entries(meters)) {
    if (!units) continue;
    for (const [unit, windows] of Object.entries(units))
      for (const [window, w] of Object.entries(windows)) rows.push([`${category} ${unit} ${window}`, w]);
  }
  const width = Math.max(0, ...rows.map(([l]) => l.length));
  return rows.map(([label, w]) => `${indent}${windowLine(label, w, width)}`);
}

/** The operator's extra fields, when the record comes from the store rather than from get_account. */
interface AdminExtras {
  unlimited_override?: boolean | null;
  updated_at?: string;
}

export function accountBlock(a: AccountRecord & AdminExtras): string {
  const pairs: Array<[string, string | number]> = [
    ['name', a.name],
    ['id', a.id],
    ['status', a.status],
    ['plan', a.plan],
    ['balance', balanceText(a.token_balance)],
  ];
  if ('unlimited_override' in a) {
    const source = a.unlimited_override === null ? 'from the plan' : 'set on the account';
    pairs.push(['unlimited', `${a.unlimited ? 'yes' : 'no'} (${source})`]);
  }
  pairs.push(['keys', a.api_key_count], ['users', a.user_count], ['created', a.created_at]);
  if (a.updated_at !== undefined) pairs.push(['updated', a.updated_at]);
  return [fields(pairs), '', 'fair use', ...fairUseLines(a.fair_use)].join('\n');
}
