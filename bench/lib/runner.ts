/**
 * @module The shared runner. Two sides (the baseline and toolgate, or toolgate on a small and on a
 * large database) are warmed up, then measured in alternating rounds in ABBA order (A, B, B, A, ...)
 * so drift and noise land on both. Each figure of a side is the median over its rounds, taken metric
 * by metric; ratios are B / A of those medians. For one scenario, runScenario first checks that both
 * sides answer its first request (and that toolgate's answer is right).
 */
import type { Fixture, Note, Scenario } from '../scenarios/scenario.js';
import type { Backend, BenchOptions } from './args.js';
import { cpuSeconds, exitedChildrenCpuSeconds, machineSeconds, ownCpuSeconds } from './cpu.js';
import { targetOn } from './goals.js';
import type { LoadRequest, PerKeyRate, Sample } from './load.js';
import { type PeakMemory, PeakWatch } from './memory.js';
import type { PgMonitor } from './postgres.js';
import { memoryLine, rateNotes } from './side-notes.js';
import { median } from './stats.js';
import type { Target } from './targets.js';
import { runWrk } from './wrk.js';

export interface SideResult {
  name: string;
  /** Medians over the measured rounds. */
  rps: number;
  p50: number;
  p99: number;
  /** Sums over the measured rounds (must be 0). */
  non2xx: number;
  errors: number;
  timeouts: number;
  /** 429 answers over the warm-up and the measured rounds: the per-key rate limiter was hit. */
  rateLimited: number;
  /** The busiest key over the warm-up and the rounds (see PerKeyRate). */
  perKey: PerKeyRate;
  /** Peak RSS of the side's server process from its warm-up to its last round. */
  memory: PeakMemory;
  rounds: Sample[];
  warmup: Sample | null;
}

export interface Ratio {
  /** B / A: below 1 for req/s means B serves fewer, above 1 for latency means B is slower. */
  rps: number;
  p50: number;
  p99: number;
  /** Round i of each side ran back to back: these pairs show how much the noise moves the ratio. */
  rpsByRound: number[];
}

export interface ScenarioResult {
  id: string;
  /** toolgate's database in this result; the baseline was measured alternately against it. */
  backend: Backend;
  title: string;
  description: string;
  baseline: SideResult;
  toolgate: SideResult;
  /** toolgate / baseline. */
  ratio: Ratio;
  /** The scenario's target for ratio.rps on this backend (met when ratio.rps >= target), or null. */
  target: number | null;
  /** A higher ratio aimed for beyond the target, or null. */
  stretch: number | null;
  /** The most toolgate's p99 may be (ms), or null. */
  p99Max: number | null;
  /** The most toolgate's peak RSS may be (MiB), or null. */
  peakRssMax: number | null;
  /** The scenario's target for postgres.ratio.rps / sqlite.ratio.rps, or null. */
  postgresTarget: number | null;
  notes: Note[];
}

/** One side of an alternation: a server, the requests it gets, and what watches its database. */
export interface Side {
  name: string;
  target: Target;
  requests: readonly LoadRequest[];
  /** Watches toolgate's PostgreSQL connections during this side's measured rounds. */
  monitor?: PgMonitor | undefined;
  /** A process this side's server calls (the proxied scenarios' upstream): its CPU is measured too. */
  helper?: Target | undefined;
}

export interface Alternation {
  a: SideResult;
  b: SideResult;
  ratio: Ratio;
  /** The CPU lines for the report (cores per process, and CPU time per request; medians of rounds). */
  cpu: string[];
}

/**
 * Warm-up of each side, then `opts.rounds` rounds of each in ABBA order, `opts.duration` seconds
 * each, `opts.connections` connections; peak RSS of both servers over the whole alternation.
 */
export async function alternate(
  a: Side,
  b: Side,
  opts: Pick<BenchOptions, 'connections' | 'duration' | 'rounds' | 'warmup'>,
  progress: (line: string) => void,
): Promise<Alternation> {
  const load = { connections: opts.connections };
  const run = runWrk;
  // The load generator's CPU: the wrk run that ended, plus this process (which drives it).
  const loadgenSeconds = () => ownCpuSeconds() + (exitedChildrenCpuSeconds() ?? 0);
  const width = Math.max(a.name.length, b.name.length, 9);
  const once = async (side: Side, seconds: number, label: string, measured = true): Promise<Sample> => {
    const child = side.target.child;
    const watch = measured ? side.monitor : undefined;
    await watch?.start();
    const helperPid = side.helper?.child.process.pid;
    const before = {
      helper: helperPid === undefined ? null : cpuSeconds(helperPid),
      server: cpuSeconds(child.process.pid),
      loadgen: loadgenSeconds(),
      machine: machineSeconds(),
      at: performance.now(),
    };
    const sample = await run(side.target.url, side.requests, { ...load, duration: seconds });
    const server = cpuSeconds(child.process.pid);
    const helperNow = helperPid === undefined ? null : cpuSeconds(helperPid);
    const helper = helperNow === null || before.helper === null ? null : helperNow - before.helper;
    const loadgen = loadgenSeconds() - before.loadgen;
    const machine = machineSeconds();
    const wall = (performance.now() - before.at) / 1000;
    const database = watch ? await watch.stop(sample.ok) : null;
    if (child.hasExited()) throw new Error(`${child.name} died during ${label}:\n${child.output()}`);
    const cores = (cpu: number | null) => (cpu === null ? null : cpu / wall);
    const serverUsed = server === null || before.server === null ? null : server - before.server;
    // Everything else the machine did meanwhile: other people's processes (and PostgreSQL's own
    // background writers). Not measurable where a figure of ours is missing.
    const others =
      machine === null ||
      before.machine === null ||
      serverUsed === null ||
      (watch && database === null) ||
      (helperPid !== undefined && helper === null)
        ? null
        : Math.max(
            0,
            machine.busy - before.machine.busy - serverUsed - loadgen - (database ?? 0) - (helper ?? 0),
          );
    sample.cpu = {
      server: cores(serverUsed),
      loadgen: cores(loadgen)!,
      database: cores(database),
      ...(helperPid === undefined ? {} : { helper: cores(helper) }),
      others: cores(others),
      stolen:
        machine === null || before.machine === null ? null : cores(machine.steal - before.machine.steal),
    };
    progress(`  ${label.padEnd(12)} ${side.name.padEnd(width)} ${describe(sample)}`);
    // Let connections close and the server settle before the other side's turn.
    await new Promise((r) => setTimeout(r, 300));
    return sample;
  };

  const memory = new PeakWatch([a.target.child.process.pid, b.target.child.process.pid]);
  memory.start();
  const warmup: [Sample | null, Sample | null] = [null, null];
  if (opts.warmup > 0) {
    warmup[0] = await once(a, opts.warmup, 'warm-up', false);
    warmup[1] = await once(b, opts.warmup, 'warm-up', false);
  }
  const rounds: [Sample[], Sample[]] = [[], []];
  for (let i = 0; i < opts.rounds; i++) {
    const order = i % 2 === 0 ? [0, 1] : [1, 0];
    for (const s of order)
      rounds[s]!.push(await once(s === 0 ? a : b, opts.duration, `round ${i + 1}/${opts.rounds}`));
  }
  const [memA, memB] = memory.stop() as [PeakMemory, PeakMemory];
  const sideA = summarise(a.name, rounds[0], warmup[0], memA);
  const sideB = summarise(b.name, rounds[1], warmup[1], memB);
  return {
    a: sideA,
    b: sideB,
    ratio: {
      rps: sideB.rps / sideA.rps,
      p50: sideB.p50 / sideA.p50,
      p99: sideB.p99 / sideA.p99,
      rpsByRound: sideB.rounds.map((t, i) => t.rps / sideA.rounds[i]!.rps),
    },
    cpu: cpuLines(sideA, sideB, a.monitor !== undefined, b.monitor !== undefined, a.helper ?? b.helper),
  };
}

export async function runScenario(
  scenario: Scenario,
  shared: Fixture,
  opts: BenchOptions,
  progress: (line: string) => void,
): Promise<ScenarioResult> {
  // A scenario with a fixture of its own (the proxied ones: another baseline, a tool to create).
  const f = scenario.prepare ? await scenario.prepare(shared) : shared;
  const requests = scenario.requests(f);
  const baselineRequests = scenario.baselineRequests?.(f) ?? requests;
  await verify(scenario, f, requests[0]!, baselineRequests[0]!);
  const notes: Note[] = [];
  const logLinesBefore = f.toolgate.child.lines();

  const run = await alternate(
    {
      name: 'baseline',
      target: f.baseline,
      requests: baselineRequests,
      helper: f.upstream,
    },
    { name: f.toolgate.name, target: f.toolgate, requests, monitor: f.toolgate.monitor, helper: f.upstream },
    opts,
    progress,
  );
  const { a: baseline, b: toolgate } = run;

  for (const side of [baseline, toolgate]) {
    const w = side.warmup;
    if (w && (w.non2xx > 0 || w.errors > 0))
      notes.push({
        level: 'warning',
        text: `${side.name} warm-up: ${w.non2xx} non-2xx ${JSON.stringify(w.statusCodes)}, ${w.errors} errors`,
      });
  }
  const logLines = f.toolgate.child.lines() - logLinesBefore;
  if (logLines > 0) {
    const last = f.toolgate.child.output().trimEnd().split('\n').slice(-3).join('\n    ');
    notes.push({
      level: 'warning',
      text: `toolgate wrote ${logLines} log lines at warn or above during this scenario; the last:\n    ${last}`,
    });
  }
  if (scenario.afterwards) {
    const runs = (side: SideResult) => [...side.rounds, ...(side.warmup ? [side.warmup] : [])];
    const ok = (side: SideResult) => 1 + runs(side).reduce((n, s) => n + s.ok, 0);
    notes.push(
      ...(await scenario.afterwards(f, {
        ok: ok(toolgate),
        runs: runs(toolgate).length,
        connections: opts.connections,
        baseline: { ok: ok(baseline), runs: runs(baseline).length },
      })),
    );
  }
  notes.push(...rateNotes(baseline, toolgate, scenario.rotates));
  notes.push(...run.cpu.map((text): Note => ({ level: 'info', text })));
  notes.push({ level: 'info', text: memoryLine([baseline, toolgate]) });
  for (const text of f.toolgate.monitor?.take() ?? []) notes.push({ level: 'info', text });

  return {
    id: scenario.id,
    backend: f.toolgate.backend,
    title: scenario.title,
    description: scenario.description,
    baseline,
    toolgate,
    ratio: run.ratio,
    target: targetOn(scenario, f.toolgate.backend),
    stretch: scenario.stretch ?? null,
    p99Max: scenario.p99Ms ?? null,
    peakRssMax: scenario.peakRssMib ?? null,
    postgresTarget: scenario.postgresTarget ?? null,
    notes,
  };
}

function summarise(name: string, rounds: Sample[], warmup: Sample | null, memory: PeakMemory): SideResult {
  const sum = (pick: (s: Sample) => number) => rounds.reduce((n, s) => n + pick(s), 0);
  const all = warmup ? [warmup, ...rounds] : rounds;
  const limiterCounts = all.map((s) => s.perKey.limiterMaxCount).filter((n): n is number => n !== null);
  return {
    name,
    rps: median(rounds.map((s) => s.rps)),
    p50: median(rounds.map((s) => s.p50)),
    p99: median(rounds.map((s) => s.p99)),
    non2xx: sum((s) => s.non2xx),
    errors: sum((s) => s.errors),
    timeouts: sum((s) => s.timeouts),
    rateLimited: all.reduce((n, s) => n + (s.statusCodes['429'] ?? 0), 0),
    perKey: {
      slots: Math.max(0, ...all.map((s) => s.perKey.slots)),
      maxPerSecond: Math.max(0, ...all.map((s) => s.perKey.maxPerSecond)),
      limit: all.find((s) => s.perKey.limit !== null)?.perKey.limit ?? null,
      limiterMaxCount: limiterCounts.length > 0 ? Math.max(...limiterCounts) : null,
    },
    memory,
    rounds,
    warmup,
  };
}

/**
 * Cores each process used during the measured rounds (median over rounds), side by side; and the same
 * as CPU time per request, which is what decides a ratio on a machine whose cores are all busy: the
 * load generator shares them with the server, so its cost per request is paid on both sides.
 */
function cpuLines(a: SideResult, b: SideResult, aDb: boolean, bDb: boolean, helper?: Target): string[] {
  const med = (list: Sample[], pick: (s: Sample, c: NonNullable<Sample['cpu']>) => number | null) => {
    const values = list.map((s) => (s.cpu ? pick(s, s.cpu) : null)).filter((v): v is number => v !== null);
    return values.length === list.length && values.length > 0 ? median(values) : null;
  };
  const cores = (list: Sample[], pick: (c: NonNullable<Sample['cpu']>) => number | null) =>
    med(list, (_s, c) => pick(c))?.toFixed(2) ?? '?';
  const perRequest = (list: Sample[], pick: (c: NonNullable<Sample['cpu']>) => number | null) => {
    const us = med(list, (s, c) => {
      const v = pick(c);
      return v === null || s.rps <= 0 ? null : (v / s.rps) * 1e6;
    });
    return us === null ? '?' : us.toFixed(0);
  };
  const h = helper?.name;
  const one = (s: SideResult, postgres: boolean) => {
    const db =
      (postgres ? `, postgres backends ${cores(s.rounds, (c) => c.database)}` : '') +
      (h ? ` + ${h} ${cores(s.rounds, (c) => c.helper ?? null)}` : '');
    return `${s.name} ${cores(s.rounds, (c) => c.server)}${db} + load generator ${cores(s.rounds, (c) => c.loadgen)} (rest of the machine ${cores(s.rounds, (c) => c.others)}, taken by the hypervisor ${cores(s.rounds, (c) => c.stolen)})`;
  };
  const oneUs = (s: SideResult, postgres: boolean) => {
    const db =
      (postgres ? ` + postgres backends ${perRequest(s.rounds, (c) => c.database)}` : '') +
      (h ? ` + ${h} ${perRequest(s.rounds, (c) => c.helper ?? null)}` : '');
    return `${s.name} ${perRequest(s.rounds, (c) => c.server)}${db} + load generator ${perRequest(s.rounds, (c) => c.loadgen)}`;
  };
  return [
    `CPU in cores (median of rounds): ${one(a, aDb)}; ${one(b, bDb)}`,
    `CPU per request in microseconds (median of rounds): ${oneUs(a, aDb)}; ${oneUs(b, bDb)}`,
  ];
}

function describe(s: Sample): string {
  const bad =
    s.non2xx > 0 || s.errors > 0
      ? `  !! non-2xx ${s.non2xx} ${JSON.stringify(s.statusCodes)}, errors ${s.errors}`
      : '';
  const limiter = s.perKey.limiterMaxCount === null ? '' : ` (limiter ${s.perKey.limiterMaxCount})`;
  const stolen = s.cpu?.stolen ? `  steal ${s.cpu.stolen.toFixed(2)} cores` : '';
  return `${Math.round(s.rps).toString().padStart(7)} req/s  p50 ${s.p50.toFixed(2)} ms  p99 ${s.p99.toFixed(2)} ms  busiest key ${s.perKey.maxPerSecond}/s${limiter}${stolen}${bad}`;
}

/** The first request of each side, sent once: 2xx from both, and the scenario's check on toolgate's body. */
async function verify(
  scenario: Scenario,
  f: Fixture,
  toolgateRequest: LoadRequest,
  baselineRequest: LoadRequest,
): Promise<void> {
  for (const target of [f.baseline, f.toolgate]) {
    const request = target === f.toolgate ? toolgateRequest : baselineRequest;
    const response = await fetch(`${target.url}${request.path}`, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    if (response.status < 200 || response.status >= 300)
      throw new Error(
        `${scenario.id}: ${target === f.toolgate ? f.toolgate.child.name : target.name} answered ${request.method} ${request.path} with ${response.status}: ${text.slice(0, 500)}`,
      );
    if (target === f.toolgate) {
      const problem = scenario.check(JSON.parse(text), f);
      if (problem)
        throw new Error(
          `${scenario.id}: ${f.toolgate.child.name}'s answer is wrong: ${problem}: ${text.slice(0, 500)}`,
        );
    }
  }
}
