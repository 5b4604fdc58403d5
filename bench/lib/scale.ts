/**
 * @module The scale comparison: get_account on a small database (`--scale-base` accounts, 1,000 by
 * default) against a large one (`--scale-accounts`, 1,000,000), both seeded by lib/seeding.ts with
 * `--keys-per-account` keys each (real digests under one secret), one toolgate process on each,
 * measured alternately like the other scenarios. Both are loaded with the same number of keys
 * (`--accounts`, 1,000 by default), spread evenly over each database's whole id range, one per
 * account. The ratio large / small says what the size of the database costs get_account.
 * Everything it makes (temp files, scratch schemas, processes) is undone when it ends.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Note } from '../scenarios/scenario.js';
import type { Backend, BenchOptions } from './args.js';
import { cleanupMark, cleanupSince } from './cleanup.js';
import type { LoadRequest } from './load.js';
import { createScratchSchema } from './postgres.js';
import { tempDir } from './processes.js';
import { countName } from './report.js';
import { alternate, type Ratio, type SideResult } from './runner.js';
import { type SampledKey, seed } from './seeding.js';
import { memoryLine, rateNotes } from './side-notes.js';
import {
  type PostgresSetup,
  startToolgatePostgres,
  startToolgateSqlite,
  type ToolgateTarget,
} from './targets.js';

export interface ScaleDatabase {
  accounts: number;
  keys: number;
  /** Seconds to seed it (migration with toolgate's CLI included). */
  seedSeconds: number;
}

export interface ScaleResult {
  backend: Backend;
  small: ScaleDatabase;
  large: ScaleDatabase;
  /** Keys rotated over, on each side. */
  rotated: number;
  a: SideResult;
  b: SideResult;
  /** large / small. */
  ratio: Ratio;
  notes: Note[];
}

export async function runScale(
  backend: Backend,
  opts: BenchOptions,
  postgres: PostgresSetup | null,
  progress: (line: string) => void,
): Promise<ScaleResult> {
  const mark = cleanupMark();
  try {
    const keySecret = randomBytes(32).toString('hex');
    const rotated = Math.min(opts.accounts, opts.scaleBase * opts.keysPerAccount);
    const sizes = [opts.scaleBase, opts.scaleAccounts] as const;
    const dir = backend === 'sqlite' ? tempDir('toolgate-bench-scale-') : null;
    const databases: ScaleDatabase[] = [];
    const samples: SampledKey[][] = [];
    const where: { file?: string; schema?: string }[] = [];
    for (const accounts of sizes) {
      const place =
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
        `  seeded ${accounts.toLocaleString('en-US')} accounts and ${result.keys.toLocaleString('en-US')} keys in ${result.seconds.toFixed(1)} s`,
      );
      databases.push({ accounts, keys: result.keys, seedSeconds: result.seconds });
      samples.push(result.sample);
      where.push(place);
    }
    const targets: ToolgateTarget[] = [];
    for (const place of where)
      targets.push(
        place.file
          ? await startToolgateSqlite({ file: place.file, keySecret })
          : await startToolgatePostgres({ ...postgres!, existing: { schema: place.schema!, keySecret } }),
      );
    const requests = samples.map((sample) =>
      sample.map(
        (s, slot): LoadRequest => ({
          method: 'POST',
          path: '/api/v1/tools/get_account',
          headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
          body: '{}',
          slot,
        }),
      ),
    );
    for (let i = 0; i < 2; i++) await verify(targets[i]!, samples[i]![0]!);
    const names = sizes.map((n) => `${countName(n)} accounts`);
    const run = await alternate(
      { name: names[0]!, target: targets[0]!, requests: requests[0]!, monitor: targets[0]!.monitor },
      { name: names[1]!, target: targets[1]!, requests: requests[1]!, monitor: targets[1]!.monitor },
      opts,
      progress,
    );
    const notes: Note[] = [];
    for (let i = 0; i < 2; i++) {
      const child = targets[i]!.child;
      if (child.lines() > 0)
        notes.push({
          level: 'warning',
          text: `toolgate on ${names[i]} wrote ${child.lines()} log lines at warn or above; the last:\n    ${child.output().trimEnd().split('\n').slice(-3).join('\n    ')}`,
        });
    }
    notes.push(...rateNotes(run.a, run.b, 'key'));
    notes.push(...run.cpu.map((text): Note => ({ level: 'info', text })));
    notes.push({ level: 'info', text: memoryLine([run.a, run.b]) });
    for (let i = 0; i < 2; i++) {
      for (const text of targets[i]!.monitor?.take() ?? [])
        notes.push({ level: 'info', text: `${names[i]}: ${text}` });
    }
    return {
      backend,
      small: databases[0]!,
      large: databases[1]!,
      rotated,
      a: run.a,
      b: run.b,
      ratio: run.ratio,
      notes,
    };
  } finally {
    progress(`  scale (${backend}): stopping toolgate, removing the seeded databases...`);
    await cleanupSince(mark);
  }
}

/** get_account with the first sampled key answers 200 with that key's account. */
async function verify(target: ToolgateTarget, first: SampledKey): Promise<void> {
  const response = await fetch(`${target.url}/api/v1/tools/get_account`, {
    method: 'POST',
    headers: { authorization: `Bearer ${first.key}`, 'content-type': 'application/json' },
    body: '{}',
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  const body = (() => {
    try {
      return JSON.parse(text) as { results?: { id?: unknown } };
    } catch {
      return null;
    }
  })();
  if (response.status !== 200 || body?.results?.id !== first.accountId)
    throw new Error(
      `scale: toolgate (${target.backend}) answered get_account with ${response.status}, not the seeded account ${first.accountId}: ${text.slice(0, 500)}`,
    );
}
