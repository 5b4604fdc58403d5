/**
 * @module The scale comparison: toolgate on a small database (`--scale-base` accounts, 1,000 by
 * default) against a large one (`--scale-accounts`, 1,000,000), both seeded by lib/seeding.ts with
 * `--keys-per-account` keys each (real digests under one secret) and the fair-use rows such
 * accounts would have (lib/seed-fair-use.ts), one toolgate process on each, measured alternately
 * like the other scenarios. Each call of scenarios/scale.ts is compared in turn on the same two
 * processes: get_account, then the metered catalogue tool (forwarding to an upstream of its own).
 * Both sides are loaded with the same number of keys (`--accounts`, 1,000 by default), spread
 * evenly over each database's whole id range, one per account. The ratio large / small says what
 * the size of the database costs the call. Everything it makes (temp files, scratch schemas,
 * processes) is undone when it ends.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { SCALE_CALLS, type ScaleCall } from '../scenarios/scale.js';
import type { Note } from '../scenarios/scenario.js';
import type { Backend, BenchOptions } from './args.js';
import { cleanupMark, cleanupSince } from './cleanup.js';
import type { LoadRequest } from './load.js';
import { createScratchSchema } from './postgres.js';
import { tempDir } from './processes.js';
import { METERED_TOOL, serveTool, startUpstream, toolDefinition } from './proxied.js';
import { countName } from './report.js';
import { alternate, type Ratio, type SideResult } from './runner.js';
import { meteredAddsUp, type Place, probeSides, searchTotals, sizesLine } from './scale-checks.js';
import { type FairUseCounts, fairUseLine } from './seed-fair-use.js';
import { type SampledKey, seed } from './seeding.js';
import { memoryLine, rateNotes } from './side-notes.js';
import {
  type PostgresSetup,
  startToolgatePostgres,
  startToolgateSqlite,
  type Target,
  type ToolgateTarget,
} from './targets.js';

export interface ScaleDatabase {
  accounts: number;
  keys: number;
  fairUse: FairUseCounts;
  /** Seconds to seed it (migration with toolgate's CLI included). */
  seedSeconds: number;
}

export interface ScaleResult {
  /** The call's id (scenarios/scale.ts): `scale` for get_account, `scale_metered`. */
  id: string;
  /** The call as the tables name it. */
  title: string;
  backend: Backend;
  small: ScaleDatabase;
  large: ScaleDatabase;
  /** Keys rotated over, on each side. */
  rotated: number;
  a: SideResult;
  b: SideResult;
  /** large / small. */
  ratio: Ratio;
  target: number;
  notes: Note[];
}

/** The two toolgate processes of one backend, each on its seeded database. */
interface Sides {
  backend: Backend;
  databases: ScaleDatabase[];
  samples: SampledKey[][];
  places: Place[];
  targets: ToolgateTarget[];
  names: string[];
  rotated: number;
  postgresUrl: string | null;
}

export async function runScale(
  backend: Backend,
  opts: BenchOptions,
  postgres: PostgresSetup | null,
  progress: (line: string) => void,
): Promise<ScaleResult[]> {
  const mark = cleanupMark();
  try {
    const sides = await seedAndStart(backend, opts, postgres, progress);
    const results: ScaleResult[] = [];
    let upstream: Target | undefined;
    for (const call of SCALE_CALLS) {
      if (call.upstream && !upstream) {
        upstream = await startUpstream();
        for (let i = 0; i < 2; i++)
          await serveTool(
            sides.targets[i]!,
            sides.samples[i]![0]!.key,
            METERED_TOOL,
            toolDefinition(upstream.url, 'metered'),
          );
      }
      progress(`  scale (${backend}): ${call.title}: ${call.description}`);
      results.push(await compare(call, sides, opts, progress, call.upstream ? upstream : undefined));
    }
    const sizes = await sizesLine(sides.places, sides.names, sides.postgresUrl);
    for (const r of results) r.notes.push({ level: 'info', text: sizes });
    return results;
  } finally {
    progress(`  scale (${backend}): stopping toolgate, removing the seeded databases...`);
    await cleanupSince(mark);
  }
}

/** Both databases seeded (small first), then a toolgate process on each. */
async function seedAndStart(
  backend: Backend,
  opts: BenchOptions,
  postgres: PostgresSetup | null,
  progress: (line: string) => void,
): Promise<Sides> {
  const keySecret = randomBytes(32).toString('hex');
  const rotated = Math.min(opts.accounts, opts.scaleBase * opts.keysPerAccount);
  const sizes = [opts.scaleBase, opts.scaleAccounts] as const;
  const dir = backend === 'sqlite' ? tempDir('toolgate-bench-scale-') : null;
  const databases: ScaleDatabase[] = [];
  const samples: SampledKey[][] = [];
  const places: Place[] = [];
  for (const accounts of sizes) {
    const place: Place =
      backend === 'sqlite'
        ? { file: join(dir!, `accounts-${accounts}.db`) }
        : { schema: await createScratchSchema(postgres!.url) };
    progress(
      `  seeding ${accounts.toLocaleString('en-US')} accounts x ${opts.keysPerAccount} keys into ${place.file ?? `schema ${place.schema}`}...`,
    );
    const result = await seed({
      accounts,
      keysPerAccount: opts.keysPerAccount,
      databaseUrl: place.file ? `sqlite:${place.file}` : postgres!.url,
      schema: place.schema,
      keySecret,
      sample: rotated,
      progress: (line) => progress(`    ${line}`),
    });
    progress(
      `  seeded ${accounts.toLocaleString('en-US')} accounts and ${result.keys.toLocaleString('en-US')} keys in ${result.seconds.toFixed(1)} s; ${fairUseLine(result.fairUse, accounts)}`,
    );
    databases.push({ accounts, keys: result.keys, fairUse: result.fairUse, seedSeconds: result.seconds });
    samples.push(result.sample);
    places.push(place);
  }
  const targets: ToolgateTarget[] = [];
  for (const place of places)
    targets.push(
      place.file
        ? await startToolgateSqlite({ file: place.file, keySecret })
        : await startToolgatePostgres({ ...postgres!, existing: { schema: place.schema!, keySecret } }),
    );
  return {
    backend,
    databases,
    samples,
    places,
    targets,
    names: sizes.map((n) => `${countName(n)} accounts`),
    rotated,
    postgresUrl: postgres?.url ?? null,
  };
}

/** One call on the small side against the same on the large side, with its checks and notes. */
async function compare(
  call: ScaleCall,
  s: Sides,
  opts: BenchOptions,
  progress: (line: string) => void,
  upstream: Target | undefined,
): Promise<ScaleResult> {
  // The sample is in id order, and so in the order of the rows: sent in that order, the consumptions a
  // group commit takes together would be neighbours, sharing pages on the small database only. Both
  // sides send their keys in one shuffled order, as calls from unrelated accounts arrive.
  const order = shuffledSlots(s.rotated);
  const requests = s.samples.map((sample) =>
    order.map((slot): LoadRequest => ({ ...call.request(sample[slot]!.key), slot })),
  );
  const first = (i: number) => s.samples[i]![order[0]!]!;
  for (let i = 0; i < 2; i++) await verify(call, s.targets[i]!, requests[i]![0]!, first(i));
  // Lines written at start (a console without mail, say) are not this comparison's.
  const linesBefore = s.targets.map((t) => t.child.lines());
  const totalsBefore = call.upstream ? await searchTotals(s) : null;
  const probes = await probeSides(s.targets, s.places, s.postgresUrl);
  const side = (i: number) => ({
    name: s.names[i]!,
    target: s.targets[i]!,
    requests: requests[i]!,
    monitor: s.targets[i]!.monitor,
    helper: upstream,
  });
  const run = await alternate(side(0), side(1), opts, progress);
  const notes: Note[] = [];
  for (let i = 0; i < 2; i++) {
    const child = s.targets[i]!.child;
    const lines = child.lines() - linesBefore[i]!;
    if (lines > 0)
      notes.push({
        level: 'warning',
        text: `toolgate on ${s.names[i]} wrote ${lines} log lines at warn or above; the last:\n    ${child.output().trimEnd().split('\n').slice(-3).join('\n    ')}`,
      });
  }
  notes.push(...(await probes.finish([run.a, run.b])));
  if (totalsBefore) notes.push(...(await meteredAddsUp(s, totalsBefore, [run.a, run.b], opts.connections)));
  notes.push(...rateNotes(run.a, run.b, 'key'));
  notes.push(...run.cpu.map((text): Note => ({ level: 'info', text })));
  notes.push({ level: 'info', text: memoryLine([run.a, run.b]) });
  for (let i = 0; i < 2; i++) {
    for (const text of s.targets[i]!.monitor?.take() ?? [])
      notes.push({ level: 'info', text: `${s.names[i]}: ${text}` });
  }
  return {
    id: call.id,
    title: call.title,
    backend: s.backend,
    small: s.databases[0]!,
    large: s.databases[1]!,
    rotated: s.rotated,
    a: run.a,
    b: run.b,
    ratio: run.ratio,
    target: call.target,
    notes,
  };
}

/** 0 to n - 1 in an order shuffled by a fixed seed (Fisher-Yates over a xorshift), the same every run. */
export function shuffledSlots(n: number): number[] {
  const slots = Array.from({ length: n }, (_, i) => i);
  let x = 0x9e3779b9;
  for (let i = n - 1; i > 0; i--) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const j = (x >>> 0) % (i + 1);
    [slots[i], slots[j]] = [slots[j]!, slots[i]!];
  }
  return slots;
}

/** The call with the first key sent answers 2xx, and its body passes the call's check. */
async function verify(call: ScaleCall, target: ToolgateTarget, r: LoadRequest, first: SampledKey) {
  const response = await fetch(`${target.url}${r.path}`, {
    method: r.method,
    headers: r.headers,
    ...(r.body === undefined ? {} : { body: r.body }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  const body = (() => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return null;
    }
  })();
  const problem =
    response.status < 200 || response.status >= 300
      ? `status ${response.status}`
      : call.check(body, first.accountId);
  if (problem)
    throw new Error(
      `scale: toolgate (${target.backend}) answered ${call.title} with the seeded key of ${first.accountId} wrongly (${problem}): ${text.slice(0, 500)}`,
    );
}
