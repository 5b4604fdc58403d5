/**
 * @module PostgreSQL's consumptions, in group commits: those that arrive together are decided in one
 * transaction of two round trips and one COMMIT (one WAL flush), however many they are. The first
 * round trip takes the idempotency keys' locks and records, locks the balance row of every account
 * of the batch, in one order for every server (so two servers' batches wait for each other, never
 * deadlock), and reads their windows, which only a holder of that lock writes. Each consumption is then decided here,
 * in order, by the domain's reference semantics (applyConsumption) on the values locked, each
 * all-or-nothing by itself, as SQLite's group commit does; nothing can change them meanwhile. The
 * second round trip writes what was decided (windows, balances, ledger entries, webhook events,
 * idempotency records, audit entries) and commits. Statements go together by the simple query
 * protocol, so their values are written in as literals (strings quoted by the driver, numbers
 * checked). The other servers learn of it by a batched notification (notify-batch.ts).
 */
import type { AuditEntry } from '../../domain/audit.js';
import {
  applyConsumption,
  type Increment,
  inKeyOrder,
  isRunning,
  sameSlot,
  type WindowState,
} from '../../domain/fair-use.js';
import { newId } from '../../domain/ids.js';
import { ledgerDelta, replayOrConflict } from '../../domain/ledger.js';
import { balanceEvents, eventBody, thresholdEvents, type WebhookEvent } from '../../domain/webhooks.js';
import type { Change } from '../changes.js';
import {
  AUDIT_COLUMNS,
  auditValues,
  LEDGER_COLUMNS,
  ledgerValues,
  toWindow,
  type WindowRow,
} from '../rows.js';
import { chargeEntry, type UsageCommit, type UsageOutcome } from '../store.js';
import { quoteLiteral } from './driver.js';
import type { PgTransactions } from './transactions.js';

/** Most consumptions decided in one transaction. */
const MAX_BATCH = 200;

interface Pending {
  c: UsageCommit;
  audit: AuditEntry | undefined;
  resolve: (outcome: UsageOutcome) => void;
  reject: (err: unknown) => void;
}

/** An account's windows and balance as the batch has left them so far. */
interface AccountState {
  windows: WindowState[];
  balance: number;
  lowBalance: number | null;
  /** Slots whose row this batch changed. */
  changed: Set<string>;
  balanceChanged: boolean;
}

type Row = Record<string, unknown>;

/** The rows (as SQL tuples) that the committed consumptions of a batch add, by table. */
interface Inserts {
  ledger: string[];
  idempotency: string[];
  audit: string[];
}

export class PgGroupCommit {
  private pending: Pending[] = [];
  private running = false;

  constructor(private readonly t: PgTransactions) {}

  commit(c: UsageCommit, audit?: AuditEntry): Promise<UsageOutcome> {
    return new Promise<UsageOutcome>((resolve, reject) => {
      this.pending.push({ c, audit, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  /** One batch at a time: those that arrive meanwhile make up the next, as large as the load makes it. */
  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, MAX_BATCH);
        try {
          const { result, notified } = await this.t.batched(async (client) => {
            const decided = await decide(client, batch);
            return { result: decided, changes: decided.changes };
          });
          // Answered once every server has applied the batch; the next batch commits meanwhile.
          void notified.then(() =>
            batch.forEach((p, i) => {
              const o = result.outcomes[i]!;
              if (o instanceof Error) p.reject(o);
              else p.resolve(o);
            }),
          );
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.running = false;
    }
  }
}

interface Decided {
  outcomes: (UsageOutcome | Error)[];
  changes: Change[];
}

async function decide(
  client: { query(text: string): Promise<unknown> },
  batch: readonly Pending[],
): Promise<Decided> {
  const accounts = [...new Set(batch.map((p) => p.c.accountId))].sort();
  const keyed = batch.filter((p) => p.c.idempotency);
  const lockKeys = [...new Set(keyed.map((p) => `usage:${p.c.accountId}:${p.c.idempotency!.key}`))].sort();
  const accountList = accounts.map(sql).join(', ');

  // Round trip 1: locks and reads, in the same order on every server.
  const first = [
    'BEGIN',
    ...lockKeys.map((k) => `SELECT pg_advisory_xact_lock(hashtextextended(${sql(k)}, 0))`),
  ];
  first.push(
    keyed.length === 0
      ? 'SELECT NULL LIMIT 0'
      : `SELECT account_id, idempotency_key, request_hash, response FROM usage_idempotency WHERE (account_id, idempotency_key) IN (${keyed
          .map((p) => `(${sql(p.c.accountId)}, ${sql(p.c.idempotency!.key)})`)
          .join(', ')})`,
  );
  // The balances' rows are the lock on everything of their account that a consumption writes (only
  // consumptions write windows): once they are held, the windows read are the latest committed,
  // including rows that another batch made, and nobody else writes them until this COMMIT. NO KEY:
  // other transactions' foreign-key checks on the account (a key, a ledger entry) do not wait.
  first.push(
    `SELECT id, token_balance, low_balance FROM accounts WHERE id IN (${accountList}) ORDER BY id FOR NO KEY UPDATE`,
    `SELECT account_id, category, unit, win, started_at, ends_at, used FROM fair_use_windows
      WHERE account_id IN (${accountList})`,
  );
  const results = (await client.query(first.join(';\n'))) as unknown as { rows: Row[] }[];
  const n = results.length;
  const priors = new Map<string, { request_hash: string; response: string }>();
  for (const r of results[n - 3]!.rows)
    priors.set(
      `${r.account_id}\0${r.idempotency_key}`,
      r as unknown as { request_hash: string; response: string },
    );
  const state = new Map<string, AccountState>();
  for (const r of results[n - 2]!.rows) {
    state.set(r.id as string, {
      windows: [],
      balance: Number(r.token_balance),
      lowBalance: r.low_balance === null ? null : Number(r.low_balance),
      changed: new Set(),
      balanceChanged: false,
    });
  }
  for (const r of results[n - 1]!.rows) {
    // A row an earlier version made to be locked, never consumed from: as good as no window.
    if (Number(r.ends_at) === 0) continue;
    state.get(r.account_id as string)?.windows.push(toWindow(r as unknown as WindowRow));
  }

  // Each consumption decided in order, all or nothing by itself, on the values locked.
  const inserts: Inserts = { ledger: [], idempotency: [], audit: [] };
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

  // Round trip 2: what was decided, and COMMIT.
  const windowRows: string[] = [];
  const balanceRows: string[] = [];
  for (const [accountId, s] of state) {
    for (const w of s.windows)
      if (s.changed.has(slotKey(w)))
        windowRows.push(row([accountId, w.category, w.unit, w.window, w.startedAt, w.endsAt, w.used]));
    if (s.balanceChanged) balanceRows.push(row([accountId, s.balance]));
  }
  const writes: string[] = [];
  if (windowRows.length > 0)
    writes.push(`INSERT INTO fair_use_windows (account_id, category, unit, win, started_at, ends_at, used)
      VALUES ${windowRows.map((r) => `(${r})`).join(', ')}
      ON CONFLICT (account_id, category, unit, win) DO UPDATE
      SET started_at = EXCLUDED.started_at, ends_at = EXCLUDED.ends_at, used = EXCLUDED.used`);
  if (balanceRows.length > 0)
    writes.push(`UPDATE accounts SET token_balance = v.b
      FROM (VALUES ${balanceRows.map((r) => `(${r})`).join(', ')}) AS v (id, b) WHERE accounts.id = v.id`);
  if (events.length > 0)
    writes.push(
      `INSERT INTO webhook_events (id, type, account_id, body, created_at) VALUES ${events
        .map((e) => `(${row([e.id, e.type, e.accountId, eventBody(e), e.at])})`)
        .join(', ')}`,
    );
  // A statement per table, not per consumption: each statement costs PostgreSQL a parse and a plan.
  if (inserts.ledger.length > 0)
    writes.push(`INSERT INTO token_ledger (${LEDGER_COLUMNS}) VALUES ${inserts.ledger.join(', ')}`);
  if (inserts.idempotency.length > 0)
    writes.push(
      `INSERT INTO usage_idempotency (account_id, idempotency_key, request_hash, response, created_at) VALUES ${inserts.idempotency.join(', ')}`,
    );
  if (inserts.audit.length > 0)
    writes.push(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES ${inserts.audit.join(', ')}`);
  await client.query([...writes, 'COMMIT'].join(';\n'));
  // Each account consumed from, with the windows and balance it was left with: exact (locked by this
  // transaction, now committed), so this server's cache keeps the account rather than reading it again.
  const changes: Change[] = [...consumed].map((account) => {
    const s = state.get(account)!;
    return { account, after: { windows: inKeyOrder([...s.windows]), tokenBalance: s.balance } };
  });
  return { outcomes, changes };
}

function decideOne(
  p: Pending,
  state: Map<string, AccountState>,
  priors: Map<string, { request_hash: string; response: string }>,
  inserts: Inserts,
  events: WebhookEvent[],
): UsageOutcome {
  const { c } = p;
  if (c.idempotency) {
    const prior = priors.get(`${c.accountId}\0${c.idempotency.key}`);
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
      const w = s.windows.find((x) => sameSlot(x, inc));
      return isRunning(w, c.now) ? w.used : 0;
    };
    events.push(
      ...thresholdEvents(c.accountId, c.increments, usedBefore, applied.states, c.thresholds, stamp),
    );
  }
  if (c.charge && balanceAfter !== null) {
    events.push(...balanceEvents(c.accountId, s.balance, balanceAfter, s.lowBalance, stamp));
    inserts.ledger.push(`(${row(ledgerValues(chargeEntry(c, c.charge), delta, balanceAfter))})`);
    s.balance = balanceAfter;
    s.balanceChanged = true;
  }
  for (const inc of c.increments) s.changed.add(slotKey(inc));
  s.windows = applied.states;
  if (c.idempotency) {
    // Kept as text, not JSONB: a replay answers byte for byte what was answered first.
    const text = JSON.stringify(response);
    inserts.idempotency.push(
      `(${row([c.accountId, c.idempotency.key, c.idempotency.requestHash, text, c.now])})`,
    );
    // A later consumption of the batch with the same key replays this one.
    priors.set(`${c.accountId}\0${c.idempotency.key}`, {
      request_hash: c.idempotency.requestHash,
      response: text,
    });
  }
  if (p.audit) inserts.audit.push(`(${row(auditValues(p.audit))})`);
  return { kind: 'committed', response };
}

const slotKey = (s: { category: string; unit: string; window: string }) =>
  `${s.category}.${s.unit}.${s.window}`;

/** A whole number for a statement: checked, so that nothing but digits is ever written in. */
function int(n: number): string {
  if (!Number.isSafeInteger(n)) throw new Error(`not a whole number: ${n}`);
  return String(n);
}

/** A value as an SQL literal: strings quoted by the driver's own escaping, whole numbers checked. */
function sql(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number') return int(v);
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'string') return quoteLiteral(v);
  return quoteLiteral(JSON.stringify(v));
}

const row = (values: readonly unknown[]) => values.map(sql).join(', ');
