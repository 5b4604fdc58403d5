/**
 * @module The shared runner. For one scenario: check that toolgate and the baseline answer its first
 * request, warm both up, then measure them in alternating rounds in ABBA order (baseline, toolgate,
 * toolgate, baseline, ...) so drift and noise land on both sides. Each figure of a side is the median
 * over its rounds, taken metric by metric; ratios are toolgate / baseline of those medians.
 */
import type { Fixture, Note, Scenario } from '../scenarios/scenario.js';
import type { Backend, BenchOptions } from './args.js';
import { cpuSeconds, machineBusySeconds, ownCpuSeconds } from './cpu.js';
import { type LoadRequest, runLoad, type Sample } from './load.js';
import { median } from './stats.js';
import type { Target } from './targets.js';

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
  rounds: Sample[];
  warmup: Sample | null;
}

export interface ScenarioResult {
  id: string;
  /** toolgate's database in this result; the baseline was measured alternately against it. */
  backend: Backend;
  title: string;
  description: string;
  baseline: SideResult;
  toolgate: SideResult;
  /** toolgate / baseline: below 1 for req/s means slower, above 1 for latency means slower. */
  ratio: { rps: number; p50: number; p99: number; rpsByRound: number[] };
  notes: Note[];
}

type Side = 'baseline' | 'toolgate';

export async function runScenario(
  scenario: Scenario,
  f: Fixture,
  opts: BenchOptions,
  progress: (line: string) => void,
): Promise<ScenarioResult> {
  const requests = scenario.requests(f);
  const targets: Record<Side, Target> = { baseline: f.baseline, toolgate: f.toolgate };
  await verify(scenario, f, requests[0]!);
  const notes: Note[] = [];
  const logLinesBefore = f.toolgate.child.lines();
  const load = { connections: opts.connections };

  const monitor = f.toolgate.monitor;
  const once = async (side: Side, seconds: number, label: string, measured = true): Promise<Sample> => {
    const child = targets[side].child;
    const watch = measured && side === 'toolgate' ? monitor : undefined;
    await watch?.start();
    const before = {
      server: cpuSeconds(child.process.pid),
      loadgen: ownCpuSeconds(),
      machine: machineBusySeconds(),
      at: performance.now(),
    };
    const sample = await runLoad(targets[side].url, requests, { ...load, duration: seconds });
    const server = cpuSeconds(child.process.pid);
    const loadgen = ownCpuSeconds() - before.loadgen;
    const busy = machineBusySeconds();
    const wall = (performance.now() - before.at) / 1000;
    const database = watch ? await watch.stop() : null;
    if (child.hasExited()) throw new Error(`${child.name} died during ${label}:\n${child.output()}`);
    const cores = (cpu: number | null) => (cpu === null ? null : cpu / wall);
    const serverUsed = server === null || before.server === null ? null : server - before.server;
    // Everything else the machine did meanwhile: other people's processes (and PostgreSQL's own
    // background writers). Not measurable where a figure of ours is missing.
    const others =
      busy === null || before.machine === null || serverUsed === null || (watch && database === null)
        ? null
        : Math.max(0, busy - before.machine - serverUsed - loadgen - (database ?? 0));
    sample.cpu = {
      server: cores(serverUsed),
      loadgen: cores(loadgen)!,
      database: cores(database),
      others: cores(others),
    };
    progress(`  ${label.padEnd(20)} ${side.padEnd(9)} ${describe(sample)}`);
    // Let connections close and the server settle before the other side's turn.
    await new Promise((r) => setTimeout(r, 300));
    return sample;
  };

  const warmup: Record<Side, Sample | null> = { baseline: null, toolgate: null };
  if (opts.warmup > 0) {
    warmup.baseline = await once('baseline', opts.warmup, 'warm-up', false);
    warmup.toolgate = await once('toolgate', opts.warmup, 'warm-up', false);
  }
  const rounds: Record<Side, Sample[]> = { baseline: [], toolgate: [] };
  for (let i = 0; i < opts.rounds; i++) {
    const order: Side[] = i % 2 === 0 ? ['baseline', 'toolgate'] : ['toolgate', 'baseline'];
    for (const side of order)
      rounds[side].push(await once(side, opts.duration, `round ${i + 1}/${opts.rounds}`));
  }

  for (const side of ['baseline', 'toolgate'] as const) {
    const w = warmup[side];
    if (w && (w.non2xx > 0 || w.errors > 0))
      notes.push({
        level: 'warning',
        text: `${side} warm-up: ${w.non2xx} non-2xx ${JSON.stringify(w.statusCodes)}, ${w.errors} errors`,
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
    const all = [...rounds.toolgate, ...(warmup.toolgate ? [warmup.toolgate] : [])];
    notes.push(
      ...(await scenario.afterwards(f, {
        ok: 1 + all.reduce((n, s) => n + s.ok, 0),
        runs: all.length,
        connections: opts.connections,
      })),
    );
  }

  notes.push({ level: 'info', text: cpuLine(rounds, f.toolgate.backend) });
  const activity = monitor?.take();
  if (activity) notes.push({ level: 'info', text: activity });

  const baseline = summarise('baseline', rounds.baseline, warmup.baseline);
  const toolgate = summarise(f.toolgate.name, rounds.toolgate, warmup.toolgate);
  return {
    id: scenario.id,
    backend: f.toolgate.backend,
    title: scenario.title,
    description: scenario.description,
    baseline,
    toolgate,
    ratio: {
      rps: toolgate.rps / baseline.rps,
      p50: toolgate.p50 / baseline.p50,
      p99: toolgate.p99 / baseline.p99,
      // Round i of each side ran back to back: these pairs show how much the noise moves the ratio.
      rpsByRound: toolgate.rounds.map((t, i) => t.rps / baseline.rounds[i]!.rps),
    },
    notes,
  };
}

function summarise(name: string, rounds: Sample[], warmup: Sample | null): SideResult {
  const sum = (pick: (s: Sample) => number) => rounds.reduce((n, s) => n + pick(s), 0);
  return {
    name,
    rps: median(rounds.map((s) => s.rps)),
    p50: median(rounds.map((s) => s.p50)),
    p99: median(rounds.map((s) => s.p99)),
    non2xx: sum((s) => s.non2xx),
    errors: sum((s) => s.errors),
    timeouts: sum((s) => s.timeouts),
    rounds,
    warmup,
  };
}

/** Cores each process used during the measured rounds (median over rounds), side by side. */
function cpuLine(rounds: Record<Side, Sample[]>, backend: Backend): string {
  const med = (list: Sample[], pick: (c: NonNullable<Sample['cpu']>) => number | null) => {
    const values = list.map((s) => (s.cpu ? pick(s.cpu) : null)).filter((v): v is number => v !== null);
    return values.length === list.length && values.length > 0 ? median(values).toFixed(2) : '?';
  };
  const b = rounds.baseline;
  const t = rounds.toolgate;
  const db = backend === 'postgres' ? `, postgres backends ${med(t, (c) => c.database)}` : '';
  return `CPU in cores (median of rounds): baseline ${med(b, (c) => c.server)} + load generator ${med(b, (c) => c.loadgen)} (rest of the machine ${med(b, (c) => c.others)}); toolgate ${med(t, (c) => c.server)}${db} + load generator ${med(t, (c) => c.loadgen)} (rest of the machine ${med(t, (c) => c.others)})`;
}

function describe(s: Sample): string {
  const bad =
    s.non2xx > 0 || s.errors > 0
      ? `  !! non-2xx ${s.non2xx} ${JSON.stringify(s.statusCodes)}, errors ${s.errors}`
      : '';
  return `${Math.round(s.rps).toString().padStart(7)} req/s  p50 ${s.p50.toFixed(2)} ms  p99 ${s.p99.toFixed(2)} ms${bad}`;
}

/** The first request, sent once to each side: 2xx from both, and the scenario's check on toolgate's body. */
async function verify(scenario: Scenario, f: Fixture, request: LoadRequest): Promise<void> {
  for (const target of [f.baseline, f.toolgate]) {
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
