/**
 * @module `npm run bench`: toolgate on each database backend (SQLite, PostgreSQL) against the same
 * bare-Fastify baseline, all real child processes on this machine, measured in the same run and
 * reported as ratios, the baseline alternated with each backend in turn (see lib/runner.ts).
 * With `--scale`, also get_account and a metered call on a small against a large seeded database
 * (lib/scale.ts). By default and with `--only idle`, toolgate's RSS at rest and what it holds
 * (lib/idle.ts).
 * Progress goes to stderr, the table to stdout, `--json <file>` the same figures as JSON; the figures
 * are merged into bench/results/latest.json, and docs/performance.md's targets table made from it.
 * Exits 1 when a figure is suspect (non-2xx answers, 429s from the rate limiter, connection
 * errors, failed checks).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { seedAccounts } from './lib/admin.js';
import { type BenchOptions, parseOptions, redactUrl, USAGE, UsageError } from './lib/args.js';
import { cleanupAll, cleanupMark, cleanupSince, installCleanupHandlers, interrupted } from './lib/cleanup.js';
import { type IdleResult, runIdle } from './lib/idle.js';
import { probe, type ServerInfo } from './lib/postgres.js';
import { ROOT } from './lib/processes.js';
import { loudly, machine, notices, type RunInfo, table, warnings } from './lib/report.js';
import { json } from './lib/report-json.js';
import { recordRun } from './lib/results.js';
import { runScenario, type ScenarioResult } from './lib/runner.js';
import { runScale, type ScaleResult } from './lib/scale.js';
import {
  profileToolgateInto,
  setToolgateEnv,
  shippedNodeArgs,
  startBaseline,
  startToolgatePostgres,
  startToolgateSqlite,
  type Target,
  type ToolgateTarget,
} from './lib/targets.js';
import { stopWrk, wrkVersion } from './lib/wrk.js';
import { configureBefore } from './scenarios/before.js';
import { SCENARIOS } from './scenarios/index.js';
import type { Fixture } from './scenarios/scenario.js';
import { LATEST_FILE, PERFORMANCE_DOC, updateDoc } from './table.js';

const progress = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<number> {
  let opts: BenchOptions | 'help';
  try {
    opts = parseOptions(process.argv.slice(2), [
      ...new Set(SCENARIOS.flatMap((s) => (s.group ? [s.id, s.group] : [s.id]))),
    ]);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bench: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (opts === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const scenarios = SCENARIOS.filter((s) =>
    opts.only === null
      ? !s.onlyWhenNamed
      : opts.only.includes(s.id) || (s.group !== undefined && opts.only.includes(s.group)),
  );
  installCleanupHandlers(() => {
    stopWrk();
  });
  setToolgateEnv(opts.toolgateEnv);
  if (opts.cpuProf) {
    const dir = resolve(opts.cpuProf);
    mkdirSync(dir, { recursive: true });
    profileToolgateInto(dir);
    progress(`bench: toolgate's CPU profiles go to ${dir}`);
  }
  // The load generator is wrk, a program of its own that spends little of the shared cores per answer.
  const wrk = wrkVersion();
  if (wrk === null) {
    process.stderr.write('bench: there is no wrk on the PATH; install it (Debian: apt-get install wrk).\n');
    return 1;
  }
  const info: RunInfo = {
    machine: machine(),
    opts,
    postgres: null,
    skipped: [],
    commit: commit(),
    toolgate_node_args: shippedNodeArgs(),
    toolgate_env: opts.toolgateEnv,
    load_generator: `${wrk}, one thread`,
  };
  const t0 = Date.now();

  let backends = opts.backends;
  let server: ServerInfo | null = null;
  if (backends.includes('postgres')) {
    const where = redactUrl(opts.postgresUrl);
    progress(`bench: asking PostgreSQL at ${where}...`);
    try {
      server = await probe(opts.postgresUrl);
    } catch (err) {
      const why = `PostgreSQL at ${where} does not answer (${err instanceof Error ? err.message : String(err)})`;
      if (opts.backendsExplicit) {
        process.stderr.write(`bench: ${why}, and --backends names postgres.\n`);
        return 1;
      }
      info.skipped.push({
        backend: 'postgres',
        reason: `${why}. SQLite only. Point at a server with --postgres-url or TOOLGATE_BENCH_POSTGRES_URL; --backends postgres turns this into an error.`,
      });
      process.stderr.write(`${loudly(notices(info), 'NOTICE:')}\n`);
      backends = backends.filter((b) => b !== 'postgres');
    }
  }
  if (server)
    info.postgres = {
      url: redactUrl(opts.postgresUrl),
      version: server.version,
      schema: null,
      poolSize: opts.poolSize,
      synchronousCommit: server.synchronousCommit,
      local: server.local,
    };
  const postgresSetup = server
    ? { url: opts.postgresUrl, poolSize: opts.poolSize, local: server.local }
    : null;

  configureBefore(postgresSetup, progress);
  const results: ScenarioResult[] = [];
  if (scenarios.length > 0) {
    const mark = cleanupMark();
    progress(`bench: starting the baseline and toolgate (${backends.join(', ')})...`);
    const started = await Promise.all([
      startBaseline(),
      ...backends.map(async (backend): Promise<ToolgateTarget> => {
        if (backend === 'sqlite') return startToolgateSqlite();
        const pg = await startToolgatePostgres(postgresSetup!);
        info.postgres!.schema = pg.schema;
        return pg;
      }),
    ]);
    const baseline = started[0] as Target;
    const toolgates = started.slice(1) as ToolgateTarget[];
    progress(
      `bench: baseline at ${baseline.url}, ${toolgates.map((t) => `toolgate (${t.backend}) at ${t.url}`).join(', ')}; seeding ${opts.accounts} accounts into each...`,
    );
    const fixtures: Fixture[] = await Promise.all(
      toolgates.map(async (toolgate) => ({
        baseline,
        toolgate,
        accounts: await seedAccounts(toolgate.url, toolgate.adminToken, opts.accounts),
      })),
    );
    for (const scenario of scenarios) {
      for (const fixture of fixtures) {
        progress(`bench: ${scenario.title} on ${fixture.toolgate.backend}: ${scenario.description}`);
        results.push(await runScenario(scenario, fixture, opts, progress));
      }
    }
    await cleanupSince(mark);
  }

  const scale: ScaleResult[] = [];
  if (opts.scale) {
    for (const backend of backends) {
      progress(
        `bench: scale on ${backend}: get_account and a metered call on ${opts.scaleBase.toLocaleString('en-US')} accounts against ${opts.scaleAccounts.toLocaleString('en-US')}, ${opts.keysPerAccount} keys each...`,
      );
      scale.push(...(await runScale(backend, opts, backend === 'postgres' ? postgresSetup : null, progress)));
    }
  }
  let idle: IdleResult | null = null;
  if (opts.idle) {
    idle = await runIdle(progress);
    if (!idle) progress('bench: idle: RSS not readable here (Linux /proc only)');
  }
  await cleanupAll();

  process.stdout.write(`\n${table(info, results, scale)}\n`);
  if (idle) process.stdout.write(`\n${idleLines(idle)}\n`);
  const problems = warnings(results, scale);
  if (problems.length > 0) process.stdout.write(`\n${loudly(problems)}\n`);
  const news = notices(info, results, scale);
  if (news.length > 0) process.stdout.write(`\n${loudly(news, 'NOTICE:')}\n`);
  const figures = json(info, results, scale, idle);
  if (opts.json) {
    const file = resolve(opts.json);
    writeFileSync(file, `${JSON.stringify(figures, null, 2)}\n`);
    progress(`bench: wrote ${file}`);
  }
  if (opts.record) {
    const { recorded, suspect } = recordRun(LATEST_FILE, figures);
    if (suspect.length > 0)
      progress(`bench: NOT recorded in ${LATEST_FILE} (suspect): ${suspect.join(', ')}`);
    if (recorded.length > 0) {
      progress(`bench: recorded ${recorded.join(', ')} in ${LATEST_FILE}`);
      try {
        if (updateDoc()) progress(`bench: wrote the targets table of ${PERFORMANCE_DOC}`);
      } catch (err) {
        progress(`bench: the targets table of ${PERFORMANCE_DOC} was not written: ${String(err)}`);
      }
    }
  }
  progress(`bench: done in ${Math.round((Date.now() - t0) / 1000)} s`);
  return problems.length > 0 ? 1 : 0;
}

/** The idle row for people: the RSS against the target, the baseline's, and the heap's largest parts. */
function idleLines(r: IdleResult): string {
  const t = r.toolgate;
  const lines = [
    `idle RSS (after ${r.waitedMs / 1000} s at rest): toolgate ${t.rssMib} MiB (anon ${t.anonMib}, file ${t.fileMib}; target <= ${r.targetMib}: ${t.rssMib <= r.targetMib ? 'met' : 'MISSED'}), bare Fastify ${r.baseline.rssMib} MiB`,
  ];
  if (r.usage)
    lines.push(
      `  memoryUsage, MiB: ${Object.entries(r.usage)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
  if (r.snapshot)
    lines.push(
      `  heap snapshot ${r.snapshot.totalMib} MiB; largest: ${r.snapshot.top.map((p) => `${p.name} ${p.mib}`).join(', ')}`,
    );
  return lines.join('\n');
}

/** The commit measured: git HEAD of the repository, `+dirty` when the work tree has changes. */
function commit(): string | null {
  const git = (...args: string[]) => {
    const r = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8', timeout: 10_000 });
    return r.status === 0 ? r.stdout.trim() : null;
  };
  const head = git('rev-parse', '--short=12', 'HEAD');
  if (!head) return null;
  const dirty = git('status', '--porcelain', '--untracked-files=no', '--', 'src', 'package.json');
  return dirty ? `${head}+dirty` : head;
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
