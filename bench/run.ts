/**
 * @module `npm run bench`: toolgate against a bare-Fastify baseline, both real child processes on
 * this machine, measured in the same run and reported as ratios (see lib/runner.ts for the method).
 * Progress goes to stderr, the table to stdout, `--json <file>` the same figures as JSON.
 * Exits 1 when a figure is suspect (non-2xx answers, connection errors, failed checks).
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { seedAccounts } from './lib/admin.js';
import { type BenchOptions, parseOptions, USAGE, UsageError } from './lib/args.js';
import { cleanupAll, installCleanupHandlers, interrupted } from './lib/cleanup.js';
import { stopLoad } from './lib/load.js';
import { json, loudly, machine, table, warnings } from './lib/report.js';
import { runScenario, type ScenarioResult } from './lib/runner.js';
import { startBaseline, startToolgateSqlite } from './lib/targets.js';
import { SCENARIOS } from './scenarios/index.js';
import type { Fixture } from './scenarios/scenario.js';

const progress = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<number> {
  let opts: BenchOptions | 'help';
  try {
    opts = parseOptions(
      process.argv.slice(2),
      SCENARIOS.map((s) => s.id),
    );
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bench: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (opts === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const scenarios = SCENARIOS.filter((s) => opts.only === null || opts.only.includes(s.id));
  installCleanupHandlers(stopLoad);
  const m = machine();
  const t0 = Date.now();

  progress('bench: starting the baseline and toolgate (sqlite)...');
  const [baseline, toolgate] = await Promise.all([startBaseline(), startToolgateSqlite()]);
  progress(
    `bench: baseline at ${baseline.url}, toolgate at ${toolgate.url}; seeding ${opts.accounts} accounts...`,
  );
  const accounts = await seedAccounts(toolgate.url, toolgate.adminToken, opts.accounts);
  const fixture: Fixture = { baseline, toolgate, accounts };

  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    progress(`bench: ${scenario.title}: ${scenario.description}`);
    results.push(await runScenario(scenario, fixture, opts, progress));
  }
  await cleanupAll();

  process.stdout.write(`\n${table(m, opts, results)}\n`);
  const problems = warnings(results);
  if (problems.length > 0) process.stdout.write(`\n${loudly(problems)}\n`);
  if (opts.json) {
    const file = resolve(opts.json);
    writeFileSync(file, `${JSON.stringify(json(m, opts, results), null, 2)}\n`);
    progress(`bench: wrote ${file}`);
  }
  progress(`bench: done in ${Math.round((Date.now() - t0) / 1000)} s`);
  return problems.length > 0 ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  async (err: unknown) => {
    if (interrupted()) return; // The signal handler cleans up and exits.
    process.stderr.write(
      `bench: failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    await cleanupAll();
    process.exitCode = 1;
  },
);
