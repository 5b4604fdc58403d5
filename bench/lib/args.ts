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
  /** Accounts (each with one key) seeded into toolgate. */
  accounts: number;
  /** Scenario ids to run; null: all. */
  only: string[] | null;
  /** Where to write the figures as JSON; null: nowhere. */
  json: string | null;
}

export const DEFAULTS: Omit<BenchOptions, 'only' | 'json'> = {
  duration: 5,
  connections: 50,
  rounds: 3,
  warmup: 2,
  accounts: 200,
};

export const USAGE = `Usage: npm run bench -- [flags]

  --duration <s>      seconds per measured round (default ${DEFAULTS.duration})
  --connections <n>   concurrent connections (default ${DEFAULTS.connections})
  --rounds <n>        measured rounds per side, baseline and toolgate alternated (default ${DEFAULTS.rounds})
  --warmup <s>        unmeasured seconds per side before each scenario, 0 for none (default ${DEFAULTS.warmup})
  --accounts <n>      accounts seeded into toolgate, one key each (default ${DEFAULTS.accounts})
  --only <ids>        comma-separated scenario ids (default: all)
  --json <file>       also write the figures to <file> as JSON
  --help              this text
`;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function parseOptions(argv: string[], scenarioIds: readonly string[]): BenchOptions | 'help' {
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
    if (!scenarioIds.includes(id))
      throw new UsageError(`--only: no scenario "${id}" (there are: ${scenarioIds.join(', ')})`);
  }
  if (v.json === '') throw new UsageError('--json needs a file name');
  return {
    duration: number('--duration', v.duration, DEFAULTS.duration, 1, 3600),
    connections: number('--connections', v.connections, DEFAULTS.connections, 1, 10_000),
    rounds: number('--rounds', v.rounds, DEFAULTS.rounds, 1, 100),
    warmup: number('--warmup', v.warmup, DEFAULTS.warmup, 0, 3600),
    accounts: number('--accounts', v.accounts, DEFAULTS.accounts, 1, 100_000),
    only,
    json: v.json ?? null,
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
      json: { type: 'string' },
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
