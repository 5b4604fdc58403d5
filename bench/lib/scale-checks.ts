/**
 * @module The scale comparison's checks and probes: that the metered call's consumptions add up on
 * both databases (the rotated accounts' `search` windows before and after the load, since the seeded
 * rows already hold counts), and, around each comparison, what each side read and wrote per answer
 * and the sizes of the tables it met (lib/scale-probes.ts), for "What limits each target".
 */
import type { Note } from '../scenarios/scenario.js';
import { accountTotals } from './admin.js';
import { RECORDS_PER_CALL } from './proxied.js';
import type { SideResult } from './runner.js';
import {
  ioLine,
  ioOf,
  postgresSizes,
  type Statio,
  sqliteSizes,
  statioLine,
  statioOf,
} from './scale-probes.js';
import type { ToolgateTarget } from './targets.js';

/** Where a side's database is: a SQLite file or a PostgreSQL scratch schema. */
export interface Place {
  file?: string;
  schema?: string;
}

interface Sided {
  targets: readonly ToolgateTarget[];
  samples: readonly (readonly { accountId: string }[])[];
  names: readonly string[];
}

type Totals = Awaited<ReturnType<typeof accountTotals>>;

/** Each side's rotated accounts' `search` 5-hour windows, summed (each account once). */
export async function searchTotals(s: Sided): Promise<Totals[]> {
  const out: Totals[] = [];
  for (let i = 0; i < 2; i++) {
    const t = s.targets[i]!;
    const ids = [...new Set(s.samples[i]!.map((k) => k.accountId))].map((id) => ({ id }));
    out.push(await accountTotals(t.url, t.adminToken, ids, 'search'));
  }
  return out;
}

const answers = (side: SideResult, pick: 'ok' | 'total') =>
  [...side.rounds, ...(side.warmup ? [side.warmup] : [])].reduce((n, r) => n + r[pick], 0);
const runsOf = (side: SideResult) => side.rounds.length + (side.warmup ? 1 : 0);

/**
 * On each side, as many consumptions as 2xx answers (plus at most a connection's worth answered
 * after each run stopped), 10 records each, counted from what the windows held before the load.
 */
export async function meteredAddsUp(
  s: Sided,
  before: readonly Totals[],
  sides: readonly SideResult[],
  connections: number,
): Promise<Note[]> {
  const after = await searchTotals(s);
  const notes: Note[] = [];
  for (let i = 0; i < 2; i++) {
    const requests = after[i]!.requests - before[i]!.requests;
    const records = after[i]!.records - before[i]!.records;
    const ok = answers(sides[i]!, 'ok');
    const slack = runsOf(sides[i]!) * connections;
    const extra = requests - ok;
    const name = s.names[i]!;
    if (extra < 0 || extra > slack)
      notes.push({
        level: 'warning',
        text: `${name}: toolgate counted ${requests} metered calls for ${ok} 2xx answers (at most ${slack} more can be answered after the runs stop)`,
      });
    else if (records !== requests * RECORDS_PER_CALL)
      notes.push({
        level: 'warning',
        text: `${name}: toolgate counted ${records} records for ${requests} calls, not ${RECORDS_PER_CALL} a call`,
      });
    else
      notes.push({
        level: 'info',
        text: `${name}: metering adds up: ${requests} calls counted for ${ok} 2xx answers (+${extra} answered after a run stopped; at most ${slack}), ${RECORDS_PER_CALL} records each`,
      });
  }
  return notes;
}

/**
 * Reads each side's I/O counters (and, on PostgreSQL, its schema's buffer statistics) now; `finish`
 * reads them again after the alternation and says what each side did per answer, warm-up included.
 */
export async function probeSides(
  targets: readonly ToolgateTarget[],
  places: readonly Place[],
  postgresUrl: string | null,
): Promise<{ finish(sides: readonly SideResult[]): Promise<Note[]> }> {
  const statio = (i: number): Promise<Statio | null> =>
    postgresUrl && places[i]!.schema ? statioOf(postgresUrl, places[i]!.schema!) : Promise.resolve(null);
  const io = (i: number) => ioOf(targets[i]!.child.process.pid);
  const ioBefore = [io(0), io(1)];
  const statioBefore = [await statio(0), await statio(1)];
  return {
    async finish(sides) {
      const ioAfter = [io(0), io(1)];
      const notes: Note[] = [];
      for (let i = 0; i < 2; i++)
        notes.push({
          level: 'info',
          text: `${sides[i]!.name}: toolgate's I/O per answer (warm-up included): ${ioLine(ioBefore[i]!, ioAfter[i]!, answers(sides[i]!, 'total'))}`,
        });
      if (statioBefore.some((x) => x !== null)) {
        // An idle backend reports its last statistics within 10 s.
        await new Promise((r) => setTimeout(r, 11_000));
        for (let i = 0; i < 2; i++)
          notes.push({
            level: 'info',
            text: `${sides[i]!.name}: PostgreSQL ${statioLine(statioBefore[i]!, await statio(i), answers(sides[i]!, 'total'))}`,
          });
      }
      return notes;
    },
  };
}

/** The sizes of the tables the calls meet on each side, as one line. */
export async function sizesLine(
  places: readonly Place[],
  names: readonly string[],
  postgresUrl: string | null,
): Promise<string> {
  const each: string[] = [];
  for (let i = 0; i < places.length; i++) {
    const p = places[i]!;
    const text = p.file
      ? sqliteSizes(p.file, ['accounts', 'fair_use_state'])
      : await postgresSizes(postgresUrl!, p.schema!, ['accounts', 'api_keys']);
    each.push(`${names[i]}: ${text}`);
  }
  return `sizes: ${each.join('; ')}`;
}
