/**
 * @module `node .bench/bench/seed.js`: seeds a toolgate database with many accounts and keys at full
 * speed (see lib/seeding.ts for how), and writes a sample of full keys, spread over the whole id
 * range, for a load generator. Build first: `npm run build && npx tsc -p bench/tsconfig.json`.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { redactUrl } from './lib/args.js';
import { fairUseLine } from './lib/seed-fair-use.js';
import { seed } from './lib/seeding.js';

const USAGE = `Usage: node .bench/bench/seed.js --database-url <url> --key-secret <s> [flags]

  --database-url <u>      sqlite:<path> or postgres://user@host:port/db (required)
  --schema <s>            PostgreSQL schema, as TOOLGATE_DATABASE_SCHEMA (default public)
  --key-secret <s>        TOOLGATE_KEY_SECRET of the servers that will serve the keys, 32+
                          characters (required; default $TOOLGATE_KEY_SECRET)
  --accounts <n>          accounts to create (default 1000000)
  --keys-per-account <n>  API keys per account (default 3)
  --key-prefix <p>        TOOLGATE_KEY_PREFIX (default tg)
  --plan <id>             the plan of every account, created with limits out of reach (default bench)
  --keys-out <file>       where to write the sample of full keys, one "<key>\\t<account id>" a line
  --sample <n>            keys in the sample, spread evenly over the whole id range (default 500)
  --batch <n>             accounts per transaction / statement (default 10000)
  --help                  this text

The database must have no accounts yet: it is migrated first with toolgate's own CLI. Each account
gets the fair-use windows a real one would have (lib/seed-fair-use.ts: about 58% with rows, 14% with
a running week, 3.5% with running 5-hour windows). On SQLite,
journal_mode=OFF and synchronous=OFF are used while seeding (seed only a scratch file that no
server has open); WAL is restored at the end.
`;

async function main(): Promise<number> {
  const { values: v, positionals } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    allowPositionals: true,
    options: {
      'database-url': { type: 'string' },
      schema: { type: 'string' },
      'key-secret': { type: 'string' },
      accounts: { type: 'string' },
      'keys-per-account': { type: 'string' },
      'key-prefix': { type: 'string' },
      plan: { type: 'string' },
      'keys-out': { type: 'string' },
      sample: { type: 'string' },
      batch: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (v.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const usage = (message: string) => {
    process.stderr.write(`seed: ${message}\n\n${USAGE}`);
    return 2;
  };
  if (positionals.length > 0) return usage(`unexpected argument "${positionals[0]}"`);
  const url = v['database-url'];
  if (!url) return usage('--database-url is required');
  const secret = v['key-secret'] ?? process.env.TOOLGATE_KEY_SECRET;
  if (!secret || secret.length < 32) return usage('--key-secret of at least 32 characters is required');
  const whole = (flag: string, raw: string | undefined, fallback: number, min: number) => {
    if (raw === undefined) return fallback;
    if (!/^[0-9]+$/.test(raw) || Number(raw) < min)
      throw new Error(`${flag} must be a whole number >= ${min}`);
    return Number(raw);
  };
  let accounts: number;
  let keysPerAccount: number;
  let sample: number;
  let batch: number;
  try {
    accounts = whole('--accounts', v.accounts, 1_000_000, 1);
    keysPerAccount = whole('--keys-per-account', v['keys-per-account'], 3, 0);
    sample = whole('--sample', v.sample, 500, 0);
    batch = whole('--batch', v.batch, 10_000, 1);
  } catch (err) {
    return usage((err as Error).message);
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  log(
    `seed: ${accounts.toLocaleString('en-US')} accounts x ${keysPerAccount} keys into ${redactUrl(url)}${v.schema ? ` (schema ${v.schema})` : ''}`,
  );
  const result = await seed({
    accounts,
    keysPerAccount,
    databaseUrl: url,
    schema: v.schema,
    keySecret: secret,
    keyPrefix: v['key-prefix'],
    plan: v.plan,
    sample,
    batch,
    progress: log,
  });
  if (v['keys-out']) {
    const file = resolve(v['keys-out']);
    writeFileSync(file, result.sample.map((s) => `${s.key}\t${s.accountId}\n`).join(''), { mode: 0o600 });
    log(`seed: wrote ${result.sample.length} keys to ${file}`);
  }
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  log(
    `seed: done: ${n(result.accounts)} accounts and ${n(result.keys)} keys in ${result.seconds.toFixed(1)} s (${n(result.accounts / result.seconds)} accounts/s + ${n(result.keys / result.seconds)} keys/s overall; finishing ${result.finishSeconds.toFixed(1)} s)`,
  );
  log(`seed: ${fairUseLine(result.fairUse, result.accounts)}`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`seed: failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
