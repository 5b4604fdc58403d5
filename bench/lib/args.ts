/** @module The command line of `npm run bench -- [flags]`, parsed and checked once. */
import { parseArgs } from 'node:util';

export interface BenchOptions {
  /** Seconds per measured round. */
  duration: number;
  /** Concurrent connections of the load generator. */
  connections: number;
  /** Measured rounds per side (baseline, toolgate), alternated. */
  rounds: number;
  /** Seconds of unmeasured load per side before a scenario's rounds (JIT, caches). */
  warmup: number;
  /** Accounts (each with one key) seeded into toolgate; also the keys rotated in the scale comparison. */
  accounts: number;
  /** Scenario ids to run; null: all. */
  only: string[] | null;
  /** Run the scale comparison (get_account and a metered call on a small and on a large seeded database). */
  scale: boolean;
  /** Measure the idle RSS (lib/idle.ts): on by default, and with `--only idle`. */
  idle: boolean;
  /** Accounts of the large database of the scale comparison. */
  scaleAccounts: number;
  /** Accounts of the small database of the scale comparison. */
  scaleBase: number;
  /** API keys per account in the scale comparison's databases. */
  keysPerAccount: number;
  /** Where to write the figures as JSON; null: nowhere. */
  json: string | null;
  /**
   * Merge the figures into bench/results/latest.json and write docs/performance.md's targets table
   * from it (off with --no-results, and for runs measuring something else than toolgate as it ships:
   * --toolgate-env, --cpu-prof).
   */
  record: boolean;
  /** toolgate's database backends to measure, each against the same baseline, in this order. */
  backends: Backend[];
  /** True when --backends was given: then a backend that cannot run is an error, not a notice. */
  backendsExplicit: boolean;
  /** The PostgreSQL server toolgate runs on (a scratch schema in it is created and dropped). */
  postgresUrl: string;
  /** TOOLGATE_DATABASE_POOL_SIZE of the PostgreSQL toolgate. */
  poolSize: number;
  /** Where toolgate's processes write V8 CPU profiles (node --cpu-prof); null: not profiled. */
  cpuProf: string | null;
  /** Settings given to every toolgate process on top of the bench's own (--toolgate-env). */
  toolgateEnv: Record<string, string>;
}

export const BACKENDS = ['sqlite', 'postgres'] as const;
export type Backend = (typeof BACKENDS)[number];

export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** The pseudo scenario id of the scale comparison, for --only. */
export const SCALE = 'scale';

/** The pseudo scenario id of the idle RSS measurement (lib/idle.ts), for --only. */
export const IDLE = 'idle';

export const DEFAULTS: Omit<
  BenchOptions,
  | 'only'
  | 'json'
  | 'record'
  | 'backendsExplicit'
  | 'postgresUrl'
  | 'scale'
  | 'idle'
  | 'cpuProf'
  | 'toolgateEnv'
> = {
  duration: 4,
  connections: 50,
  rounds: 3,
  // A fresh server is not settled after 2 s of load: second by second, both sides' get_account rates
  // rise about 8% after the first 6 s, and toolgate's p99 falls from about 7 ms to 3.5; with 2 s
  // toolgate's first rounds were its slowest (docs/performance.md, "Method").
  warmup: 6,
  accounts: 1000,
  scaleAccounts: 1_000_000,
  scaleBase: 1000,
  keysPerAccount: 3,
  backends: [...BACKENDS],
  poolSize: 10,
};

export const USAGE = `Usage: npm run bench -- [flags]

  --duration <s>      seconds per measured round (default ${DEFAULTS.duration})
  --connections <n>   concurrent connections (default ${DEFAULTS.connections})
  --rounds <n>        measured rounds per side, baseline and toolgate alternated (default ${DEFAULTS.rounds})
  --warmup <s>        unmeasured seconds per side before each scenario, 0 for none (default ${DEFAULTS.warmup})
  --accounts <n>      accounts seeded into toolgate, one key each, rotated over by the load (default
                      ${DEFAULTS.accounts}; toolgate's per-key rate limit, 100/s, is in play: the busiest
                      key's rate is printed, and a 429 fails the run)
  --only <ids>        comma-separated scenario ids or groups: get_account, consumption,
                      consumption_alerts, proxied (proxied_metered, proxied_free, proxied_charged),
                      mcp (mcp_2025, mcp_2026, mcp_metered), idle (toolgate's RSS after start,
                      once idle, and what its heap holds), scale, and before
                      (get_account_before, consumption_before: against toolgate built from the
                      commit before the meters, or TOOLGATE_BENCH_BEFORE; run only when named)
                      (default: all but scale and before)
  --scale             also run the scale comparison: get_account and a metered call on a database
                      of --scale-base accounts against one of --scale-accounts, both seeded by
                      lib/seeding.ts (bench/seed.ts) with --keys-per-account keys each and their
                      fair-use rows, the same --accounts keys rotated on both; takes minutes (1M
                      accounts: 1.5-2 min to seed on SQLite, 2-2.5 on PostgreSQL, on 2 cores)
  --scale-accounts <n>  accounts of the large database (default ${DEFAULTS.scaleAccounts})
  --scale-base <n>    accounts of the small database (default ${DEFAULTS.scaleBase})
  --keys-per-account <n>  keys per account in both (default ${DEFAULTS.keysPerAccount})
  --json <file>       also write the figures to <file> as JSON, round by round
  --no-results        do not merge the figures into bench/results/latest.json nor write
                      docs/performance.md's targets table from it (runs with --toolgate-env or
                      --cpu-prof never do: they measure something else than toolgate as it ships)
  --backends <list>   toolgate's databases, comma-separated: sqlite, postgres (default both; without
                      this flag an unreachable PostgreSQL is skipped with a notice, with it the run fails)
  --postgres-url <u>  the PostgreSQL server (default $TOOLGATE_BENCH_POSTGRES_URL, else
                      ${DEFAULT_POSTGRES_URL}); the bench works in a scratch schema
                      bench_<random hex> that it creates and drops, and touches nothing else
  --pool-size <n>     TOOLGATE_DATABASE_POOL_SIZE of the PostgreSQL toolgate (default ${DEFAULTS.poolSize})
  --cpu-prof <dir>    toolgate's processes write V8 CPU profiles into <dir> when they stop (node
                      --cpu-prof); summarise one with node .bench/bench/profile.js <file>
  --toolgate-env <KEY=VALUE>  a setting for every toolgate process (repeatable), to measure what a
                      capability costs: e.g. TOOLGATE_METRICS_PORT=0, TOOLGATE_REDIS_URL=redis://127.0.0.1:6379
  --help              this text
`;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function parseOptions(
  argv: string[],
  scenarioIds: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): BenchOptions | 'help' {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const v = parsed.values;
  if (v.help) return 'help';
  if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  const only =
    v.only === undefined
      ? null
      : v.only
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '');
  for (const id of only ?? []) {
    if (!scenarioIds.includes(id) && id !== SCALE && id !== IDLE)
      throw new UsageError(
        `--only: no scenario "${id}" (there are: ${[...scenarioIds, SCALE, IDLE].join(', ')})`,
      );
  }
  if (v.json === '') throw new UsageError('--json needs a file name');
  if (v['cpu-prof'] === '') throw new UsageError('--cpu-prof needs a directory');
  const toolgateEnv: Record<string, string> = {};
  for (const pair of v['toolgate-env'] ?? []) {
    const m = /^(TOOLGATE_[A-Z0-9_]+)=(.*)$/.exec(pair);
    if (!m) throw new UsageError(`--toolgate-env wants TOOLGATE_NAME=value (got "${pair}")`);
    toolgateEnv[m[1]!] = m[2]!;
  }
  const backends: Backend[] = [];
  for (const name of (v.backends ?? BACKENDS.join(',')).split(',').map((s) => s.trim())) {
    if (name === '') continue;
    if (!(BACKENDS as readonly string[]).includes(name))
      throw new UsageError(`--backends: no backend "${name}" (there are: ${BACKENDS.join(', ')})`);
    if (!backends.includes(name as Backend)) backends.push(name as Backend);
  }
  if (backends.length === 0) throw new UsageError('--backends names no backend');
  const postgresUrl = v['postgres-url'] ?? (env.TOOLGATE_BENCH_POSTGRES_URL || DEFAULT_POSTGRES_URL);
  if (!/^postgres(ql)?:\/\/.+/.test(postgresUrl))
    throw new UsageError(
      `--postgres-url must be postgres://user@host:port/db (got "${redactUrl(postgresUrl)}")`,
    );
  return {
    duration: number('--duration', v.duration, DEFAULTS.duration, 1, 3600),
    connections: number('--connections', v.connections, DEFAULTS.connections, 1, 10_000),
    rounds: number('--rounds', v.rounds, DEFAULTS.rounds, 1, 100),
    warmup: number('--warmup', v.warmup, DEFAULTS.warmup, 0, 3600),
    accounts: number('--accounts', v.accounts, DEFAULTS.accounts, 1, 100_000),
    only,
    scale: Boolean(v.scale) || (only?.includes(SCALE) ?? false),
    idle: only === null || only.includes(IDLE),
    scaleAccounts: number('--scale-accounts', v['scale-accounts'], DEFAULTS.scaleAccounts, 1, 100_000_000),
    scaleBase: number('--scale-base', v['scale-base'], DEFAULTS.scaleBase, 1, 100_000_000),
    keysPerAccount: number('--keys-per-account', v['keys-per-account'], DEFAULTS.keysPerAccount, 1, 100),
    json: v.json ?? null,
    record: !v['no-results'] && Object.keys(toolgateEnv).length === 0 && v['cpu-prof'] === undefined,
    backends,
    backendsExplicit: v.backends !== undefined,
    postgresUrl,
    poolSize: number('--pool-size', v['pool-size'], DEFAULTS.poolSize, 1, 999),
    cpuProf: v['cpu-prof'] ?? null,
    toolgateEnv,
  };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      duration: { type: 'string' },
      connections: { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      accounts: { type: 'string' },
      only: { type: 'string' },
      scale: { type: 'boolean' },
      'scale-accounts': { type: 'string' },
      'scale-base': { type: 'string' },
      'keys-per-account': { type: 'string' },
      json: { type: 'string' },
      'no-results': { type: 'boolean' },
      backends: { type: 'string' },
      'postgres-url': { type: 'string' },
      'pool-size': { type: 'string' },
      'cpu-prof': { type: 'string' },
      'toolgate-env': { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

function number(flag: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^[0-9]+$/.test(raw)) throw new UsageError(`${flag} must be a whole number (got "${raw}")`);
  const n = Number(raw);
  if (n < min || n > max) throw new UsageError(`${flag} must be from ${min} to ${max} (got ${n})`);
  return n;
}

/** The URL without its password, for messages and reports. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}
