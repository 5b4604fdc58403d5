/**
 * @module A batch of PostgreSQL consumptions decided in memory, on the values its transaction locked
 * and read (consumption.ts), and the statements that write what was decided. Each consumption is
 * decided in order, by the domain's reference semantics (applyConsumption), all-or-nothing by
 * itself, as SQLite's group commit does. What was decided is written by one named statement
 * (consumption-sql.ts), its values as arrays, a column each.
 */
import type { AuditEntry } from '../../domain/audit.js';
import { applyConsumption, type Increment, isRunning, type WindowState } from '../../domain/fair-use.js';
import { findWindow, type StoredWindow, storedWindowsOf } from '../../domain/fair-use-order.js';
import { newId } from '../../domain/ids.js';
import { ledgerDelta, replayOrConflict } from '../../domain/ledger.js';
import type { Category } from '../../domain/plans.js';
import { balanceEvents, eventBody, thresholdEvents, type WebhookEvent } from '../../domain/webhooks.js';
import { auditValues, ledgerValues } from '../rows.js';
import { chargeEntry, type UsageCommit, type UsageOutcome } from '../store.js';
import { Columns, type NamedQuery, WRITTEN_WIDTHS, writesOf } from './consumption-sql.js';

export interface Pending {
  c: UsageCommit;
  audit: AuditEntry | undefined;
  resolve: (outcome: UsageOutcome) => void;
  reject: (err: unknown) => void;
}

/**
 * What a consumption is decided on: an account's balance and alert level, and its windows (those
 * started, in key order) of the categories its batch consumes from, the only ones read and written.
 */
export interface AccountValues {
  windows: WindowState[];
  /** The categories `windows` holds (all their windows), in key order. */
  categories: Category[];
  balance: number;
  lowBalance: number | null;
}

export type Priors = Map<string, { request_hash: string; response: string }>;

export const priorKey = (accountId: string, key: string) => `${accountId}\0${key}`;

/** The rows that the committed consumptions of a batch add, by table, a column at a time. */
interface Inserts {
  ledger: Columns;
  idempotency: Columns;
  audit: Columns;
}

export interface BatchDecision {
  /** By consumption, in the batch's order: its outcome, or the error that failed it alone. */
  outcomes: (UsageOutcome | Error)[];
  /** Each account consumed from, as the batch leaves it (its windows of the categories read, in key order). */
  after: Map<string, AccountValues>;
  /** The statements that write what was decided (COMMIT not included): none, or one (writesOf). */
  writes: NamedQuery[];
}

/** Decides `batch` on `values` (the accounts found; an account not there is not found). */
export function decideBatch(
  batch: readonly Pending[],
  values: ReadonlyMap<string, AccountValues>,
  priors: Priors,
): BatchDecision {
  // Each account's values as the batch has left them so far.
  const state = new Map<string, AccountValues>();
  for (const [id, v] of values) state.set(id, { ...v });
  const [, ledger, , idempotency, audit] = WRITTEN_WIDTHS;
  const inserts: Inserts = {
    ledger: new Columns(ledger!),
    idempotency: new Columns(idempotency!),
    audit: new Columns(audit!),
  };
  const events: WebhookEvent[] = [];
  const outcomes: (UsageOutcome | Error)[] = [];
  const consumed = new Set<string>();
  for (const p of batch) {
    try {
      const outcome = decideOne(p, state, priors, inserts, events);
      outcomes.push(outcome);
      if (outcome.kind === 'committed') consumed.add(p.c.accountId);
    } catch (err) {
      // Rendering failed: this consumption fails alone, before anything of it was written.
      outcomes.push(err as Error);
    }
  }
  const after = new Map<string, AccountValues>();
  // In key order already: applyConsumption keeps them so.
  for (const id of consumed) after.set(id, state.get(id)!);
  return { outcomes, after, writes: writeStatements(after, inserts, events) };
}

function writeStatements(
  after: Map<string, AccountValues>,
  inserts: Inserts,
  events: WebhookEvent[],
): NamedQuery[] {
  // Each account consumed from gets the windows of the categories it read and its balance as the
  // batch left them, whether or not the balance moved: both were read under this transaction's
  // lock, so rewriting is exact.
  const accounts = new Columns(WRITTEN_WIDTHS[0]!);
  for (const [id, v] of after) accounts.push([id, JSON.stringify(storedCategories(v)), v.balance]);
  const webhookEvents = new Columns(WRITTEN_WIDTHS[2]!);
  for (const e of events) webhookEvents.push([e.id, e.type, e.accountId, eventBody(e), e.at]);
  const writes = writesOf([accounts, inserts.ledger, webhookEvents, inserts.idempotency, inserts.audit]);
  return writes ? [writes] : [];
}

/** `accounts.fair_use`'s members for the categories `v` holds (migration 010). */
function storedCategories(v: AccountValues): Record<Category, StoredWindow[]> {
  const stored: Record<Category, StoredWindow[]> = {};
  for (const category of v.categories) stored[category] = storedWindowsOf(v.windows, category);
  return stored;
}

function decideOne(
  p: Pending,
  state: Map<string, AccountValues>,
  priors: Priors,
  inserts: Inserts,
  events: WebhookEvent[],
): UsageOutcome {
  const { c } = p;
  if (c.idempotency) {
    const prior = priors.get(priorKey(c.accountId, c.idempotency.key));
    if (prior)
      return replayOrConflict(prior.request_hash, c.idempotency.requestHash, () => ({
        kind: 'replayed' as const,
        response: JSON.parse(prior.response),
      }));
  }
  const s = state.get(c.accountId);
  if (!s) return { kind: 'not_found' };
  const applied = applyConsumption(s.windows, c.increments, c.now);
  if (!applied.ok) return { kind: 'exceeded', exceeded: applied.exceeded };
  let balanceAfter: number | null = null;
  let delta = 0;
  if (c.charge) {
    delta = ledgerDelta('charge', c.charge.amount);
    balanceAfter = s.balance + delta;
    if (balanceAfter < 0) return { kind: 'insufficient', balance: s.balance };
  }
  // Before any write of it: should rendering fail, only this consumption does.
  const response = c.render(applied.states, balanceAfter);
  const stamp = () => ({ id: newId('msg', c.now * 1000), at: c.now });
  if (c.thresholds) {
    const usedBefore = (inc: Increment) => {
      const w = findWindow(s.windows, inc);
      return isRunning(w, c.now) ? w.used : 0;
    };
    events.push(
      ...thresholdEvents(c.accountId, c.increments, usedBefore, applied.states, c.thresholds, stamp),
    );
  }
  if (c.charge && balanceAfter !== null) {
    events.push(...balanceEvents(c.accountId, s.balance, balanceAfter, s.lowBalance, stamp));
    inserts.ledger.push(ledgerValues(chargeEntry(c, c.charge), delta, balanceAfter));
    s.balance = balanceAfter;
  }
  s.windows = applied.states;
  if (c.idempotency) {
    // Kept as text, not JSONB: a replay answers byte for byte what was answered first.
    const text = JSON.stringify(response);
    inserts.idempotency.push([c.accountId, c.idempotency.key, c.idempotency.requestHash, text, c.now]);
    // A later consumption of the batch with the same key replays this one.
    priors.set(priorKey(c.accountId, c.idempotency.key), {
      request_hash: c.idempotency.requestHash,
      response: text,
    });
  }
  if (p.audit) inserts.audit.push(auditValues(p.audit));
  return { kind: 'committed', response };
}
