/** @module The numbered migration history, the same on every backend; applied in order, each once. */
import { initial } from './001-initial.js';
import { audit } from './002-audit.js';
import { fairUseRows } from './003-fair-use-rows.js';
import { tools } from './004-tools.js';
import { usageHistory } from './005-usage-history.js';
import { webhooksMigration } from './006-webhooks.js';
import { fairUseOnAccounts } from './007-fair-use-on-accounts.js';
import { ledgerIdempotencyIndex } from './008-ledger-idempotency-index.js';
import { meters } from './009-meters.js';
import { fairUseByCategory } from './010-fair-use-by-category.js';
import { consoleMigration } from './011-console.js';
import { oauth } from './012-oauth.js';
import { paymentsMigration } from './013-payments.js';
import { usageUnits } from './014-usage-units.js';
import { customerAlertsMigration } from './015-customer-alerts.js';
import { planNamesMigration } from './016-plan-names.js';
import { usageHourly } from './017-usage-hourly.js';
import { commitCounter } from './018-commit-counter.js';
import { ledgerByAccount } from './019-ledger-by-account.js';

export interface Migration {
  version: number;
  name: string;
  /** Null: nothing to change on that backend (the version is still recorded). */
  sqlite: string | null;
  postgres: string | null;
}

export const MIGRATIONS: readonly Migration[] = [
  initial,
  audit,
  fairUseRows,
  tools,
  usageHistory,
  webhooksMigration,
  fairUseOnAccounts,
  ledgerIdempotencyIndex,
  meters,
  fairUseByCategory,
  consoleMigration,
  oauth,
  paymentsMigration,
  usageUnits,
  customerAlertsMigration,
  planNamesMigration,
  usageHourly,
  commitCounter,
  ledgerByAccount,
];

export function migrationLabel(m: Migration): string {
  return `${String(m.version).padStart(3, '0')}-${m.name}`;
}
