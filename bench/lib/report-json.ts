/**
 * @module The run's figures as JSON, round by round (`--json <file>`); bench/results/latest.json is
 * made from it (lib/results.ts).
 */
import { loadavg } from 'node:os';
import { redactUrl } from './args.js';
import { acrossBackends, judge, met, stretchMet } from './goals.js';
import type { IdleResult } from './idle.js';
import { METHOD, notices, type RunInfo, warnings } from './report.js';
import type { Ratio, ScenarioResult, SideResult } from './runner.js';
import type { ScaleResult } from './scale.js';
import { median } from './stats.js';

/** The JSON of a run, as written by `--json` and read by lib/results.ts. */
export type RunJson = ReturnType<typeof json>;

export function json(
  info: RunInfo,
  results: readonly ScenarioResult[],
  scale: readonly ScaleResult[] = [],
  idle: IdleResult | null = null,
) {
  const { machine: m, opts } = info;
  const round3 = (x: number | null | undefined) =>
    x !== null && x !== undefined && Number.isFinite(x) ? Math.round(x * 1000) / 1000 : null;
  const perKey = (p: SideResult['perKey']) => ({
    rotated: p.slots,
    busiest_per_second: p.maxPerSecond,
    rate_limit_per_second: p.limit,
    limiter_highest_count: p.limiterMaxCount,
  });
  const side = (s: SideResult) => ({
    name: s.name,
    rps: round3(s.rps),
    cpu_us_per_request: round3(cpuPerRequest(s)),
    p50_ms: round3(s.p50),
    p99_ms: round3(s.p99),
    non_2xx: s.non2xx,
    rate_limited_429: s.rateLimited,
    errors: s.errors,
    timeouts: s.timeouts,
    peak_rss_mib: s.memory.peakMib,
    peak_rss_source: s.memory.source,
    peak_rss_sampled_mib: s.memory.sampledMib,
    peak_rss_since_start_mib: s.memory.lifetimeMib,
    per_key: perKey(s.perKey),
    rounds: s.rounds.map((r) => ({
      rps: round3(r.rps),
      p50_ms: round3(r.p50),
      p99_ms: round3(r.p99),
      mean_ms: round3(r.mean),
      responses: r.total,
      status_codes: r.statusCodes,
      errors: r.errors,
      seconds: r.seconds,
      per_key: perKey(r.perKey),
      cpu_cores: r.cpu
        ? {
            server: round3(r.cpu.server),
            load_generator: round3(r.cpu.loadgen),
            postgres_backends: round3(r.cpu.database),
            ...(r.cpu.helper === undefined ? {} : { upstream: round3(r.cpu.helper) }),
            other_processes: round3(r.cpu.others),
            stolen_by_hypervisor: round3(r.cpu.stolen),
          }
        : null,
    })),
  });
  const database = (d: ScaleResult['small']) => ({
    accounts: d.accounts,
    keys: d.keys,
    fair_use: {
      rows: d.fairUse.rows,
      accounts: d.fairUse.accounts,
      running_week: d.fairUse.runningWeek,
      running_5h: d.fairUse.running5h,
    },
    seed_seconds: round3(d.seedSeconds),
  });
  const ratio = (r: Ratio) => ({
    rps: round3(r.rps),
    p50: round3(r.p50),
    p99: round3(r.p99),
    rps_by_round: r.rpsByRound.map(round3),
  });
  return {
    generated_at: new Date().toISOString(),
    commit: info.commit,
    toolgate_node_args: info.toolgate_node_args,
    toolgate_env: Object.fromEntries(
      Object.entries(info.toolgate_env).map(([k, v]) => [k, k.endsWith('_URL') ? redactUrl(v) : v]),
    ),
    load_generator: info.load_generator,
    machine: { ...m, loadavg_1m_at_end: Math.round((loadavg()[0] ?? 0) * 100) / 100 },
    options: { ...opts, postgresUrl: redactUrl(opts.postgresUrl) },
    method: METHOD,
    postgres: info.postgres,
    skipped_backends: info.skipped,
    scenarios: results.map((r) => ({
      id: r.id,
      backend: r.backend,
      title: r.title,
      description: r.description,
      baseline: side(r.baseline),
      toolgate: side(r.toolgate),
      ratio: ratio(r.ratio),
      target_rps_ratio: r.target,
      stretch_rps_ratio: r.stretch,
      stretch_met: stretchMet(r),
      target_p99_ms: r.p99Max,
      target_peak_rss_mib: r.peakRssMax,
      targets: judge(r),
      target_met: judge(r).length === 0 ? null : met(r),
      ...postgresVsSqlite(results, r),
      notes: r.notes,
    })),
    scale: scale.map((r) => ({
      id: r.id,
      title: r.title,
      backend: r.backend,
      keys_rotated: r.rotated,
      small: database(r.small),
      large: database(r.large),
      small_side: side(r.a),
      large_side: side(r.b),
      ratio_large_to_small: ratio(r.ratio),
      target_rps_ratio: r.target,
      target_met: r.ratio.rps >= r.target,
      notes: r.notes,
    })),
    idle: idle && {
      waited_s: idle.waitedMs / 1000,
      target_rss_mib: idle.targetMib,
      target_met: idle.toolgate.rssMib <= idle.targetMib,
      toolgate: {
        rss_mib: idle.toolgate.rssMib,
        anon_mib: idle.toolgate.anonMib,
        file_mib: idle.toolgate.fileMib,
      },
      baseline: {
        rss_mib: idle.baseline.rssMib,
        anon_mib: idle.baseline.anonMib,
        file_mib: idle.baseline.fileMib,
      },
      memory_usage_mib: idle.usage,
      heap_snapshot: idle.snapshot && { total_mib: idle.snapshot.totalMib, top: idle.snapshot.top },
    },
    warnings: warnings(results, scale),
    notices: notices(info, results, scale),
  };
}

/** On a scenario's PostgreSQL entry, when SQLite ran too: its ratio over SQLite's, and that target. */
function postgresVsSqlite(results: readonly ScenarioResult[], r: ScenarioResult) {
  const b = r.backend === 'postgres' ? acrossBackends(results, r.id) : null;
  if (!b) return {};
  return {
    rps_ratio_to_sqlite: Math.round(b.rps * 1000) / 1000,
    target_rps_ratio_to_sqlite: b.target,
    target_to_sqlite_met: b.target === null ? null : b.met,
  };
}

/** The server's CPU time per answer, microseconds: the median over the measured rounds, or null. */
function cpuPerRequest(s: SideResult): number | null {
  const each = s.rounds.map((r) =>
    r.cpu?.server == null || r.rps <= 0 ? null : (r.cpu.server / r.rps) * 1e6,
  );
  if (each.length === 0 || each.some((v) => v === null)) return null;
  return median(each as number[]);
}
