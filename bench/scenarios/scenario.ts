/**
 * @module What a scenario is: the requests of one kind of traffic, sent alike to the baseline and to
 * toolgate, plus the checks that make sure toolgate answers them as intended (a bench of 401s proves
 * nothing). The runner (lib/runner.ts) does the measuring; a scenario only describes.
 */
import type { SeededAccount } from '../lib/admin.js';
import type { Backend } from '../lib/args.js';
import type { LoadRequest } from '../lib/load.js';
import type { Target, ToolgateTarget } from '../lib/targets.js';

/** The product's memory target for a server under load: 150 MiB, judged on every scenario. */
export const PEAK_RSS_MIB = 150;

/** What every scenario runs against: the two servers and the seeded accounts. */
export interface Fixture {
  baseline: Target;
  toolgate: ToolgateTarget;
  accounts: readonly SeededAccount[];
  /**
   * A process both servers call (the upstream of the proxied scenarios): the runner measures its CPU
   * beside theirs, since it shares the cores with them.
   */
  upstream?: Target;
}

export interface Note {
  level: 'info' | 'warning';
  text: string;
}

/** Totals over every toolgate run of a scenario (warm-up included), for the after-checks. */
export interface ToolgateTotals {
  /** 2xx answers the load generator counted, plus the one of the check before measuring. */
  ok: number;
  /** Load runs; at each stop up to `connections` requests may be answered uncounted. */
  runs: number;
  connections: number;
  /**
   * The same for the baseline side: what a scenario whose baseline is toolgate itself (its HTTP
   * route, against MCP) adds to toolgate's counts.
   */
  baseline: { ok: number; runs: number };
}

export interface Scenario {
  /** For --only and the JSON. */
  id: string;
  /** Another name for --only that selects this scenario with others (`proxied`). */
  group?: string;
  /** Run only when --only names it or its group, not in a run of every scenario. */
  onlyWhenNamed?: boolean;
  title: string;
  /** One line: what toolgate is asked. */
  description: string;
  /** What the requests rotate over, for the per-key rate line: 'key' or 'account'. */
  rotates: string;
  /**
   * The least toolgate / baseline req/s ratio this scenario is meant to reach (report: met or
   * missed): one for every backend, or per backend (a backend left out: figures shown, not judged);
   * none for scenarios without a target.
   */
  target?: number | Partial<Record<Backend, number>>;
  /** A higher ratio aimed for beyond the target, shown beside it; missing it is no notice. */
  stretch?: number;
  /** The most toolgate's median p99 latency may be, milliseconds. */
  p99Ms?: number;
  /** The most toolgate's peak RSS over the scenario may be, MiB. */
  peakRssMib?: number;
  /**
   * The least ratio of its PostgreSQL ratio to its SQLite ratio in the same run (report: met or
   * missed, when both backends ran); none for scenarios without one.
   */
  postgresTarget?: number;
  /**
   * Before anything else, per backend: the fixture to run against, when it is not the shared one
   * (another baseline process, a tool to create in toolgate first).
   */
  prepare?(f: Fixture): Promise<Fixture>;
  /**
   * The requests, one per seeded account (or key); each connection cycles through them. The baseline
   * gets the same requests: its one route answers any POST path.
   */
  requests(f: Fixture): LoadRequest[];
  /** What the baseline is sent instead, when it is another kind of request (MCP against HTTP). */
  baselineRequests?(f: Fixture): LoadRequest[];
  /** The body of toolgate's 2xx answer to `requests(f)[0]`: null when right, else what is wrong. */
  check(body: unknown, f: Fixture): string | null;
  /** After measuring: checks of what toolgate recorded, as notes for the report. */
  afterwards?(f: Fixture, totals: ToolgateTotals): Promise<Note[]>;
}
