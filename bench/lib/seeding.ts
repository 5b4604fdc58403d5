/**
 * @module Bulk seeding of a toolgate database, straight into its tables at full speed: `accounts`
 * accounts on one plan, `keysPerAccount` API keys each with real HMAC-SHA256 digests under the
 * given secret, and the fair-use windows such accounts would have (lib/seed-fair-use.ts: about 58%
 * of accounts with rows, a few with running windows). Used by bench/seed.ts (the command) and by the
 * bench's scale comparison.
 *
 * - The schema is toolgate's own: the database is first brought up to date and the plan created
 *   with toolgate's CLI (`toolgate plans set`, which migrates first), so the tables and indexes are
 *   exactly those of the migrations, and the plan went through toolgate's validation.
 * - The tables must be empty of accounts: this writes only into a fresh database.
 * - Ids, keys, digests and hints are made by toolgate's own functions (src/domain/ids.ts,
 *   src/domain/api-keys.ts), ids time-ordered in insertion order (one millisecond per account). The
 *   rows are written in bulk by hand because toolgate has no bulk path: a million accounts through
 *   its use cases, one transaction each, would take far longer than the bench should.
 * - The windows are stored as toolgate stores them: SQLite a `fair_use_state` row per account and
 *   category (migration 009), PostgreSQL a member per category of `accounts.fair_use` (migration 010).
 * - SQLite: one prepared statement per table, one transaction per batch, with `journal_mode=OFF`,
 *   `synchronous=OFF` and a 1 GiB page cache while seeding (a crash leaves a corrupt file: seed
 *   only a scratch file that no server has open); `journal_mode=WAL` is restored at the end, and
 *   `synchronous` is a setting of the connection only (toolgate sets its own).
 * - PostgreSQL: multi-row `INSERT … SELECT … FROM unnest($1::text[], …)`, one per table and batch,
 *   each batch's statements sent while the next batch is being generated; `synchronous_commit=off`
 *   for this session only. Indexes stay as the migration made them. Then `VACUUM ANALYZE` of the
 *   tables, which autovacuum would do on its own in a live database (and is off on some test
 *   servers), and a `CHECKPOINT`. Either way the seeded data is on disk when seeding ends, and no
 *   checkpoint or writeback of it is left to run beside the rounds (a checkpoint triggered by the
 *   seeding's WAL otherwise writes for another 4.5 minutes, through the measurement).
 */
import { spawnSync } from 'node:child_process';
import { createSecretKey } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { digestKey, generateKey, keyHint } from '../../src/domain/api-keys.js';
import { newId } from '../../src/domain/ids.js';
import { type FairUseCounts, fairUseOf, noFairUse, SEEDED_CATEGORIES } from './seed-fair-use.js';
import { Meter } from './seed-progress.js';

/** The repository root: this file runs from .bench/bench/lib/ (the bench) or bench/lib/ (the tests). */
const ROOT = (() => {
  let dir = import.meta.dirname;
  while (!existsSync(join(dir, 'bin', 'toolgate.js')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
})();

const HUGE = 1_000_000_000;
/** The plan every seeded account is on: limits the bench never reaches. */
export const SEED_PLAN_LIMITS = [
  'enrich.records.5h',
  'enrich.records.1w',
  'enrich.requests.5h',
  'search.records.5h',
  'search.records.1w',
  'search.requests.5h',
].map((slot) => `${slot}=${HUGE}`);

export interface SeedOptions {
  accounts: number;
  keysPerAccount: number;
  /** `sqlite:<path>` or `postgres://…`. */
  databaseUrl: string;
  /** PostgreSQL schema (TOOLGATE_DATABASE_SCHEMA); default public. */
  schema?: string | undefined;
  /** TOOLGATE_KEY_SECRET of the servers that will use the keys (at least 32 characters). */
  keySecret: string;
  /** TOOLGATE_KEY_PREFIX; default tg. */
  keyPrefix?: string | undefined;
  /** The plan id (created or updated with limits out of reach); default bench. */
  plan?: string | undefined;
  /** How many full keys to keep, spread evenly over the whole id range; default 500. */
  sample?: number | undefined;
  /** Accounts per batch (one transaction on SQLite, one statement per table on PostgreSQL). */
  batch?: number | undefined;
  /** The clock the fair-use windows are seeded at, Unix seconds; default now. */
  now?: number | undefined;
  progress?: ((line: string) => void) | undefined;
}

export interface SampledKey {
  key: string;
  accountId: string;
}

export interface SeedResult {
  accounts: number;
  keys: number;
  /** The fair-use rows written (a category of an account each) and what their windows are. */
  fairUse: FairUseCounts;
  sample: SampledKey[];
  seconds: number;
  /**
   * Seconds of the finish, included above: VACUUM ANALYZE and CHECKPOINT (PostgreSQL), or the journal
   * switch and an fsync of the file (SQLite).
   */
  finishSeconds: number;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** A fresh batch of rows: the accounts [first, first + count) and their keys, as column arrays. */
interface Batch {
  accountIds: string[];
  names: string[];
  accountCreated: number[];
  /** Each account's windows by category (lib/seed-fair-use.ts), null for one that never consumed. */
  fairUse: ReturnType<typeof fairUseOf>[];
  keyIds: string[];
  keyAccounts: string[];
  digests: string[];
  hints: string[];
  keyCreated: number[];
}

class Generator {
  private nextSample = 0;
  private sampleIndex = 0;
  readonly sample: SampledKey[] = [];
  private readonly baseMs: number;
  readonly fairUse = noFairUse();
  /** The HMAC key made once, as the servers do (KeyDigests), not from the text for every key. */
  private readonly secret: ReturnType<typeof createSecretKey>;

  constructor(
    private readonly o: Required<Omit<SeedOptions, 'progress' | 'schema' | 'now'>>,
    /** The seeding's clock for the fair-use windows, Unix seconds. */
    private readonly now: number,
  ) {
    this.secret = createSecretKey(Buffer.from(o.keySecret, 'utf8'));
    // Ids and created_at run up to now, one millisecond per account.
    this.baseMs = Date.now() - o.accounts;
    this.nextSample = this.sampleAt(0);
  }

  private get totalKeys(): number {
    return this.o.accounts * this.o.keysPerAccount;
  }

  private sampleAt(j: number): number {
    const n = Math.min(this.o.sample, this.totalKeys);
    return j < n ? Math.floor((j * this.totalKeys) / n) : Number.POSITIVE_INFINITY;
  }

  batch(first: number, count: number): Batch {
    const kpa = this.o.keysPerAccount;
    const b: Batch = {
      accountIds: new Array(count),
      names: new Array(count),
      accountCreated: new Array(count),
      fairUse: new Array(count),
      keyIds: new Array(count * kpa),
      keyAccounts: new Array(count * kpa),
      digests: new Array(count * kpa),
      hints: new Array(count * kpa),
      keyCreated: new Array(count * kpa),
    };
    for (let i = 0; i < count; i++) {
      const n = first + i;
      const ms = this.baseMs + n;
      const created = Math.floor(ms / 1000);
      const accountId = newId('acc', ms);
      b.accountIds[i] = accountId;
      b.names[i] = `seed-${String(n + 1).padStart(7, '0')}`;
      b.accountCreated[i] = created;
      b.fairUse[i] = fairUseOf(n, this.now, this.fairUse);
      for (let m = 0; m < kpa; m++) {
        const k = i * kpa + m;
        const key = generateKey(this.o.keyPrefix);
        b.keyIds[k] = newId('key', ms);
        b.keyAccounts[k] = accountId;
        b.digests[k] = digestKey(this.secret, key);
        b.hints[k] = keyHint(key);
        b.keyCreated[k] = created;
        if (n * kpa + m === this.nextSample) {
          this.sample.push({ key, accountId });
          this.nextSample = this.sampleAt(++this.sampleIndex);
        }
      }
    }
    return b;
  }
}

/** toolgate's own CLI on the database: migrate, then create (or update) the seed plan. */
function prepareWithToolgate(o: SeedOptions, plan: string): void {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    TOOLGATE_DATABASE_URL: o.databaseUrl,
    TOOLGATE_KEY_SECRET: o.keySecret,
    TOOLGATE_KEY_PREFIX: o.keyPrefix ?? 'tg',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  };
  if (o.schema) env.TOOLGATE_DATABASE_SCHEMA = o.schema;
  const cli = join(ROOT, 'bin', 'toolgate.js');
  const r = spawnSync(process.execPath, [cli, 'plans', 'set', plan, ...SEED_PLAN_LIMITS, '--no-unlimited'], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (r.status !== 0)
    throw new Error(
      `toolgate plans set ${plan} failed (exit ${r.status ?? r.signal}): ${(r.stderr || r.stdout || String(r.error ?? '')).trim()}\n(is dist/ built? npm run build)`,
    );
}

export async function seed(options: SeedOptions): Promise<SeedResult> {
  const o = {
    accounts: options.accounts,
    keysPerAccount: options.keysPerAccount,
    databaseUrl: options.databaseUrl,
    keySecret: options.keySecret,
    keyPrefix: options.keyPrefix ?? 'tg',
    plan: options.plan ?? 'bench',
    sample: options.sample ?? 500,
    batch: options.batch ?? 10_000,
  };
  const progress = options.progress ?? (() => {});
  if (!Number.isInteger(o.accounts) || o.accounts < 1) throw new Error('accounts must be at least 1');
  if (!Number.isInteger(o.keysPerAccount) || o.keysPerAccount < 0)
    throw new Error('keys per account must be 0 or more');
  if (o.keySecret.length < 32) throw new Error('the key secret must be at least 32 characters');
  if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema))
    throw new Error(`schema "${options.schema}" is not a lower-case schema name`);
  const t0 = performance.now();
  const sqlitePath = o.databaseUrl.startsWith('sqlite:')
    ? resolve(o.databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, ''))
    : null;
  if (sqlitePath) mkdirSync(dirname(sqlitePath), { recursive: true });
  else if (!/^postgres(ql)?:\/\//.test(o.databaseUrl))
    throw new Error('the database URL must be sqlite:<path> or postgres://…');

  progress(`seed: migrating and creating plan ${o.plan} with toolgate's CLI...`);
  prepareWithToolgate(options, o.plan);
  const generator = new Generator(o, options.now ?? Math.floor(Date.now() / 1000));
  const meter = new Meter(o.accounts, o.keysPerAccount, generator.fairUse, progress);
  let finishSeconds: number;
  if (sqlitePath) finishSeconds = seedSqlite(sqlitePath, o, generator, meter);
  else finishSeconds = await seedPostgres(o.databaseUrl, options.schema ?? 'public', o, generator, meter);
  const seconds = (performance.now() - t0) / 1000;
  return {
    accounts: o.accounts,
    keys: o.accounts * o.keysPerAccount,
    fairUse: generator.fairUse,
    sample: generator.sample,
    seconds,
    finishSeconds,
  };
}

function seedSqlite(
  path: string,
  o: { accounts: number; batch: number; plan: string },
  generator: Generator,
  meter: Meter,
): number {
  const db = new Database(path);
  try {
    const existing = (db.prepare('SELECT count(*) AS n FROM accounts').get() as { n: number }).n;
    if (existing > 0)
      throw new Error(`${path} already has ${existing} accounts: seed only into a fresh database`);
    // Scratch-file settings while seeding (see the module comment).
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -1048576');
    db.pragma('temp_store = MEMORY');
    db.pragma('foreign_keys = ON');
    const account = db.prepare(
      `INSERT INTO accounts (id, name, plan_id, status, unlimited_override, token_balance, created_at, updated_at, plan_since)
       VALUES (?, ?, ?, 'active', NULL, 0, ?, ?, ?)`,
    );
    const windows = db.prepare('INSERT INTO fair_use_state (account_id, category, windows) VALUES (?, ?, ?)');
    const key = db.prepare(
      `INSERT INTO api_keys (id, account_id, name, digest, hint, created_at, revoked_at, last_used_at)
       VALUES (?, ?, 'seed', ?, ?, ?, NULL, NULL)`,
    );
    const write = db.transaction((b: Batch) => {
      for (let i = 0; i < b.accountIds.length; i++) {
        const created = b.accountCreated[i];
        account.run(b.accountIds[i], b.names[i], o.plan, created, created, created);
        const fairUse = b.fairUse[i];
        if (!fairUse) continue;
        // In key order (category), as toolgate's upserts leave them.
        for (const category of SEEDED_CATEGORIES) {
          const stored = fairUse[category];
          if (stored) windows.run(b.accountIds[i], category, JSON.stringify(stored));
        }
      }
      for (let k = 0; k < b.keyIds.length; k++)
        key.run(b.keyIds[k], b.keyAccounts[k], b.digests[k], b.hints[k], b.keyCreated[k]);
    });
    for (let first = 0; first < o.accounts; first += o.batch) {
      const count = Math.min(o.batch, o.accounts - first);
      write(generator.batch(first, count));
      meter.done(first + count);
    }
    const t = performance.now();
    // Back to the journal toolgate uses (it also sets it on open).
    db.pragma('journal_mode = WAL');
    db.close();
    // Written with synchronous=OFF: put on disk now, as a database that has served for a while is,
    // rather than by the kernel's writeback during the first rounds measured on it.
    const fd = openSync(path, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return (performance.now() - t) / 1000;
  } finally {
    if (db.open) db.close();
  }
}

async function seedPostgres(
  url: string,
  schema: string,
  o: { accounts: number; batch: number; plan: string },
  generator: Generator,
  meter: Meter,
): Promise<number> {
  const c = new pg.Client({ connectionString: url, application_name: 'toolgate_seed' });
  c.on('error', () => {});
  await c.connect();
  try {
    await c.query(`SET search_path TO "${schema}"`);
    await c.query('SET synchronous_commit = off');
    const existing = Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM accounts')).rows[0]!.n);
    if (existing > 0)
      throw new Error(`schema ${schema} already has ${existing} accounts: seed only into a fresh database`);
    const insert = async (b: Batch) => {
      await c.query(
        `INSERT INTO accounts (id, name, plan_id, status, unlimited_override, token_balance, created_at, updated_at, plan_since, fair_use)
         SELECT id, name, $3, 'active', NULL, 0, created_at, created_at, created_at, fair_use::jsonb
           FROM unnest($1::text[], $2::text[], $4::bigint[], $5::text[]) AS t (id, name, created_at, fair_use)`,
        [
          b.accountIds,
          b.names,
          o.plan,
          b.accountCreated,
          b.fairUse.map((f) => (f ? JSON.stringify(f) : '{}')),
        ],
      );
      await c.query(
        `INSERT INTO api_keys (id, account_id, name, digest, hint, created_at, revoked_at, last_used_at)
         SELECT id, account_id, 'seed', digest, hint, created_at, NULL, NULL
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])
             AS t (id, account_id, digest, hint, created_at)`,
        [b.keyIds, b.keyAccounts, b.digests, b.hints, b.keyCreated],
      );
    };
    // One batch in flight in PostgreSQL while this process generates the next.
    let inFlight: Promise<void> = Promise.resolve();
    for (let first = 0; first < o.accounts; first += o.batch) {
      const count = Math.min(o.batch, o.accounts - first);
      const b = generator.batch(first, count);
      await inFlight;
      inFlight = insert(b).then(() => meter.done(first + count));
      // A failed batch must not go unhandled while the next one is generated.
      inFlight.catch(() => {});
    }
    await inFlight;
    const t = performance.now();
    await c.query('VACUUM (ANALYZE) plans, accounts, api_keys');
    // The seeded rows on disk now, not by a checkpoint spread over the rounds measured on them
    // (nothing else changes: the server's next checkpoint would write the same). Needs the
    // pg_checkpoint role or a superuser; without it, the next checkpoint writes them.
    await c.query('CHECKPOINT').catch((err: unknown) => meter.say(`seed: no CHECKPOINT (${String(err)})`));
    return (performance.now() - t) / 1000;
  } finally {
    await c.end().catch(() => {});
  }
}
