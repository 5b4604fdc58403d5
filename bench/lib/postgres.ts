/**
 * @module The PostgreSQL side of the bench: is the server there, a scratch schema of our own
 * (created here, so it is provably ours, and always dropped: on a normal end, on an error, on
 * SIGINT/SIGTERM, and synchronously with psql on exit), and a monitor that watches toolgate's
 * connections in pg_stat_activity during the measured rounds. Nothing else in the database is
 * touched: other people's tests may use the same database at the same time.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { DEFAULT_POSTGRES_URL, redactUrl } from './args.js';
import { onCleanup } from './cleanup.js';
import { commandLine, cpuSeconds } from './cpu.js';
import { tempDir } from './processes.js';

/** The only schema names this module ever creates, and so the only ones it will drop. */
const SCRATCH = /^bench_[0-9a-f]{16}$/;

function client(url: string, applicationName: string): pg.Client {
  return new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 3_000,
    // Bounded: a stuck server must not hang the bench (or its cleanup).
    statement_timeout: 10_000,
    query_timeout: 11_000,
    application_name: applicationName,
  });
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = client(url, 'toolgate_bench');
  c.on('error', () => {});
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => {});
  }
}

export interface ServerInfo {
  version: string;
  maxConnections: number;
  synchronousCommit: string;
  /** True when the server's backends are processes of this machine (their CPU time can be read). */
  local: boolean;
}

/** Connects once and asks a few settings; the error says why it could not. */
export async function probe(url: string): Promise<ServerInfo> {
  return withClient(url, async (c) => {
    const r = await c.query<{ v: string; m: string; s: string; pid: number }>(
      `SELECT current_setting('server_version') AS v, current_setting('max_connections') AS m,
              current_setting('synchronous_commit') AS s, pg_backend_pid() AS pid`,
    );
    const row = r.rows[0]!;
    return {
      version: row.v,
      maxConnections: Number(row.m),
      synchronousCommit: row.s,
      local: isLocalBackend(row.pid),
    };
  });
}

function isLocalBackend(pid: number): boolean {
  return /^postgres/.test(commandLine(pid) ?? '');
}

function dropStatement(name: string): string {
  if (!SCRATCH.test(name)) throw new Error(`refusing to drop schema "${name}": not a bench scratch schema`);
  return `DROP SCHEMA IF EXISTS "${name}" CASCADE`;
}

/**
 * Creates a fresh schema `bench_<16 hex>` (a plain CREATE SCHEMA: it fails rather than adopt one
 * that exists) and registers its drop with the cleanup. toolgate's own CREATE SCHEMA IF NOT EXISTS
 * then finds it. Registered before toolgate starts, so the drop runs after toolgate has stopped.
 */
export async function createScratchSchema(url: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const name = `bench_${randomBytes(8).toString('hex')}`;
    try {
      await withClient(url, (c) => c.query(`CREATE SCHEMA "${name}"`));
    } catch (err) {
      if ((err as { code?: string }).code === '42P06' && attempt < 3) continue; // duplicate_schema
      throw err;
    }
    onCleanup({
      name: `PostgreSQL schema ${name}`,
      run: () => dropScratchSchema(url, name),
      runSync: () => dropScratchSchemaSync(url, name),
    });
    return name;
  }
}

async function dropScratchSchema(url: string, name: string): Promise<void> {
  const sql = dropStatement(name);
  try {
    await withClient(url, async (c) => {
      await c.query("SET lock_timeout = '5s'");
      await c.query(sql);
    });
  } catch (err) {
    throw new Error(`${String(err)}; drop it by hand: psql '${redactUrl(url)}' -c '${sql}'`);
  }
}

/** The last resort on process exit (no event loop left): psql, synchronously. */
function dropScratchSchemaSync(url: string, name: string): void {
  const sql = dropStatement(name);
  const r = spawnSync(
    'psql',
    [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', `SET lock_timeout = '5s'; ${sql}`],
    {
      env: { ...process.env, PGCONNECT_TIMEOUT: '5' },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 15_000,
    },
  );
  if (r.status !== 0)
    process.stderr.write(
      `bench: could not drop PostgreSQL schema ${name}; drop it by hand: psql '${redactUrl(url)}' -c '${sql}'\n`,
    );
}

/** The URL toolgate gets: the same, with an application_name of its own to find its connections by. */
export function withApplicationName(url: string, applicationName: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', applicationName);
  return u.toString();
}

interface ActivityRow {
  pid: number;
  ours: boolean;
  state: string | null;
  wait: string | null;
}

/**
 * Samples pg_stat_activity every 100 ms while toolgate's rounds run: what toolgate's connections
 * are doing (running, waiting on what, idle in a transaction while toolgate works, idle in the pool),
 * other sessions active on the server at the same time (noise), and the CPU time of toolgate's
 * backends when the server is on this machine.
 */
export class PgMonitor {
  private readonly conn: pg.Client;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private samples = 0;
  private stateSum = new Map<string, number>();
  private activeSum = new Map<string, number>();
  private othersActiveSum = 0;
  private maxOurs = 0;
  private cpuAtStart = new Map<number, number>();
  private lastPids: number[] = [];
  /** The next transaction id at the round's start; ids assigned and answers given over the rounds. */
  private xidAtStart = 0;
  private xids = 0;
  private answers = 0;
  private readonly local: boolean;

  private constructor(
    url: string,
    private readonly applicationName: string,
    local: boolean,
  ) {
    this.conn = client(url, 'toolgate_bench_monitor');
    this.conn.on('error', () => {});
    this.local = local;
  }

  static async open(url: string, applicationName: string, local: boolean): Promise<PgMonitor> {
    const m = new PgMonitor(url, applicationName, local);
    await m.conn.connect();
    onCleanup({ name: 'PostgreSQL monitor', run: () => m.conn.end().catch(() => {}), runSync: () => {} });
    return m;
  }

  private async sample(): Promise<ActivityRow[]> {
    const r = await this.conn.query<ActivityRow>(
      `SELECT pid, application_name = $1 AS ours, state,
              CASE WHEN wait_event IS NULL THEN NULL ELSE wait_event_type || ':' || wait_event END AS wait
         FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`,
      [this.applicationName],
    );
    return r.rows;
  }

  private record(rows: ActivityRow[]): void {
    this.samples++;
    let ours = 0;
    for (const row of rows) {
      if (!row.ours) {
        if (row.state === 'active') this.othersActiveSum++;
        continue;
      }
      ours++;
      const state = row.state ?? 'unknown';
      this.stateSum.set(state, (this.stateSum.get(state) ?? 0) + 1);
      if (state === 'active') {
        // No wait event: the backend is on a CPU (or queued for one).
        const what = row.wait ?? 'CPU';
        this.activeSum.set(what, (this.activeSum.get(what) ?? 0) + 1);
      }
    }
    this.maxOurs = Math.max(this.maxOurs, ours);
    this.lastPids = rows.filter((r) => r.ours).map((r) => r.pid);
  }

  /**
   * The id the next writing transaction will get, read without taking one: over a round, the
   * difference counts every transaction that wrote (in the whole cluster: nothing else runs there).
   */
  private async nextXid(): Promise<number> {
    const r = await this.conn.query<{ next: string }>(
      'SELECT txid_snapshot_xmax(txid_current_snapshot()) AS next',
    );
    return Number(r.rows[0]!.next);
  }

  /** Right before a measured toolgate round. */
  async start(): Promise<void> {
    this.xidAtStart = await this.nextXid();
    this.lastPids = (await this.sample()).filter((r) => r.ours).map((r) => r.pid);
    this.cpuAtStart = new Map();
    if (this.local)
      for (const pid of this.lastPids) {
        const s = cpuSeconds(pid);
        if (s !== null) this.cpuAtStart.set(pid, s);
      }
    this.timer = setInterval(() => {
      if (this.inFlight) return;
      this.inFlight = this.sample()
        .then((rows) => this.record(rows))
        .catch(() => {})
        .finally(() => {
          this.inFlight = null;
        });
    }, 100);
  }

  /**
   * Right after the round, with the 2xx answers it gave: the CPU seconds toolgate's backends used in
   * it (null: not measurable).
   */
  async stop(answers: number): Promise<number | null> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.inFlight;
    this.xids += (await this.nextXid()) - this.xidAtStart;
    this.answers += answers;
    if (!this.local) return null;
    let used = 0;
    // A connection opened during the round counts from 0 (its start-up is part of the round's cost).
    for (const pid of this.lastPids) {
      const end = cpuSeconds(pid);
      if (end !== null) used += end - (this.cpuAtStart.get(pid) ?? 0);
    }
    return used;
  }

  /** What the samples since the last call show, as lines; then starts afresh. */
  take(): string[] {
    const n = this.samples;
    if (n === 0) return [];
    const avg = (x: number) => (x / n).toFixed(1);
    const states = [...this.stateSum.entries()].sort((a, b) => b[1] - a[1]);
    const waits = [...this.activeSum.entries()].sort((a, b) => b[1] - a[1]).slice(0, 4);
    const parts = states.map(([state, sum]) => {
      const detail =
        state === 'active' && waits.length > 0
          ? ` (${waits.map(([w, s]) => `${w} ${avg(s)}`).join(', ')})`
          : '';
      return `${avg(sum)} ${state}${detail}`;
    });
    const line = `pg_stat_activity, mean of ${n} samples (every 100 ms): toolgate's ${this.maxOurs} connections ${parts.join(', ')}; other sessions active on the server: ${avg(this.othersActiveSum)}`;
    const perAnswer = this.answers > 0 ? (this.xids / this.answers).toFixed(3) : '-';
    // A group commit of consumptions takes two transaction ids, in its two round trips: its own and
    // its notification's; so for consumptions this is also the round trips per consumption.
    const xids = `transactions that wrote: ${this.xids} over the measured rounds, ${perAnswer} per 2xx answer (a consumptions' group commit writes two, its own and its notification's, in its two round trips; toolgate's heartbeats and once-a-second writes add a few a second)`;
    this.samples = 0;
    this.xids = 0;
    this.answers = 0;
    this.stateSum = new Map();
    this.activeSum = new Map();
    this.othersActiveSum = 0;
    this.maxOurs = 0;
    return [line, xids];
  }
}

/**
 * A database of a scenario's own: a SQLite file in a new temp dir, or a scratch schema on the
 * run's PostgreSQL (its URL is not in the fixture: the one the bench's own flag defaults to).
 */
export async function scratchDatabase(
  backend: 'sqlite' | 'postgres',
  prefix: string,
): Promise<{ databaseUrl: string; schema: string | undefined }> {
  if (backend === 'sqlite')
    return { databaseUrl: `sqlite:${join(tempDir(prefix), 'toolgate.db')}`, schema: undefined };
  const databaseUrl = process.env.TOOLGATE_BENCH_POSTGRES_URL || DEFAULT_POSTGRES_URL;
  return { databaseUrl, schema: await createScratchSchema(databaseUrl) };
}
