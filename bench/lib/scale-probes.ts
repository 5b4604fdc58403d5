/**
 * @module What the scale comparison reads beside req/s and CPU, to say where a large database costs
 * time: each toolgate process's system calls and bytes read and written per answer (/proc/<pid>/io:
 * SQLite reads a page that missed its cache with a pread, and writes the WAL with pwrite), each
 * side's PostgreSQL buffer hits and reads per answer (pg_statio_user_tables of its scratch schema),
 * and the sizes of the tables a call meets (SQLite's dbstat, PostgreSQL's relation sizes).
 */
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { PAGE_CACHE_KIB } from '../../src/store/sqlite/executor.js';

/** /proc/<pid>/io's counters (Linux). */
export interface Io {
  rchar: number;
  wchar: number;
  syscr: number;
  syscw: number;
  /** What the kernel read from and wrote to the disk for it (not the page cache). */
  read_bytes: number;
  write_bytes: number;
}

/** A process's counters, and those of its main thread: the event loop, where SQLite's statements run. */
export interface ProcessIo {
  all: Io;
  loop: Io;
}

function readIo(file: string): Io {
  const out: Record<string, number> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [k, v] = line.split(':');
    if (k && v) out[k.trim()] = Number(v);
  }
  return out as unknown as Io;
}

export function ioOf(pid: number | undefined): ProcessIo | null {
  if (pid === undefined) return null;
  try {
    return { all: readIo(`/proc/${pid}/io`), loop: readIo(`/proc/${pid}/task/${pid}/io`) };
  } catch {
    return null;
  }
}

/**
 * The counters between two reads, per answer, on the event loop (its sockets, and SQLite's reads of
 * pages its cache misses and its WAL writes at each commit) and on the other threads (the WAL's
 * fdatasync, and the checkpointer copying WAL frames into the database).
 */
export function ioLine(before: ProcessIo | null, after: ProcessIo | null, answers: number): string {
  if (!before || !after || answers <= 0) return '?';
  const per = (k: keyof Io, t: 'all' | 'loop' | 'others') => {
    const d = (x: 'all' | 'loop') => after[x][k] - before[x][k];
    return (t === 'others' ? d('all') - d('loop') : d(t)) / answers;
  };
  const calls = (t: 'loop' | 'others') =>
    `read() ${per('syscr', t).toFixed(2)} calls ${(per('rchar', t) / 1024).toFixed(2)} KB, write() ${per('syscw', t).toFixed(2)} calls ${(per('wchar', t) / 1024).toFixed(2)} KB`;
  return `event loop ${calls('loop')}; other threads ${calls('others')}; to disk ${(per('write_bytes', 'all') / 1024).toFixed(2)} KB, from disk ${(per('read_bytes', 'all') / 1024).toFixed(2)} KB`;
}

export interface Statio {
  heapHit: number;
  heapRead: number;
  indexHit: number;
  indexRead: number;
  /** Row updates, and those made HOT (on the row's own page, no index entry). */
  updates: number;
  hotUpdates: number;
}

/**
 * The buffer hits and reads (blocks PostgreSQL found in shared_buffers, or read from the kernel) of
 * a schema's tables and indexes so far. A backend reports them at most once a second when busy and
 * within 10 s once idle: read them after a pause.
 */
export async function statioOf(url: string, schema: string): Promise<Statio | null> {
  const c = new pg.Client({ connectionString: url, application_name: 'toolgate_bench_statio' });
  c.on('error', () => {});
  try {
    await c.connect();
    const r = await c.query<Record<string, string | null>>(
      `SELECT sum(heap_blks_hit) AS hh, sum(heap_blks_read) AS hr,
              sum(coalesce(idx_blks_hit, 0)) AS ih, sum(coalesce(idx_blks_read, 0)) AS ir,
              (SELECT sum(n_tup_upd) FROM pg_stat_user_tables WHERE schemaname = $1) AS u,
              (SELECT sum(n_tup_hot_upd) FROM pg_stat_user_tables WHERE schemaname = $1) AS hu
         FROM pg_statio_user_tables WHERE schemaname = $1`,
      [schema],
    );
    const row = r.rows[0]!;
    return {
      heapHit: Number(row.hh ?? 0),
      heapRead: Number(row.hr ?? 0),
      indexHit: Number(row.ih ?? 0),
      indexRead: Number(row.ir ?? 0),
      updates: Number(row.u ?? 0),
      hotUpdates: Number(row.hu ?? 0),
    };
  } catch {
    return null;
  } finally {
    await c.end().catch(() => {});
  }
}

export function statioLine(before: Statio | null, after: Statio | null, answers: number): string {
  if (!before || !after || answers <= 0) return '?';
  const per = (k: keyof Statio) => ((after[k] - before[k]) / answers).toFixed(2);
  const hits = after.heapHit - before.heapHit + after.indexHit - before.indexHit;
  const reads = after.heapRead - before.heapRead + after.indexRead - before.indexRead;
  const ratio = hits + reads > 0 ? ((100 * hits) / (hits + reads)).toFixed(2) : '?';
  const updates = after.updates - before.updates;
  const hot = updates > 0 ? `${((100 * (after.hotUpdates - before.hotUpdates)) / updates).toFixed(1)}%` : '?';
  return `buffers per answer: heap ${per('heapHit')} hit + ${per('heapRead')} read, indexes ${per('indexHit')} hit + ${per('indexRead')} read (${ratio}% hits); row updates ${per('updates')} per answer, ${hot} HOT`;
}

/** The B-trees a call meets in a SQLite file: pages, depth and MiB, from dbstat (read only). */
export function sqliteSizes(file: string, names: readonly string[]): string {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare(
        `SELECT name, count(*) AS pages, max(length(path) - length(replace(path, '/', ''))) AS depth,
                sum(pgsize) AS bytes
           FROM dbstat WHERE name IN (${names.map(() => '?').join(', ')}) GROUP BY name ORDER BY name`,
      )
      .all(...names) as { name: string; pages: number; depth: number; bytes: number }[];
    const cache = `${(PAGE_CACHE_KIB / 1024).toFixed(1)} MiB`;
    return `${rows.map((r) => `${r.name} ${r.pages.toLocaleString('en-US')} pages (${(r.bytes / 2 ** 20).toFixed(1)} MiB, depth ${r.depth})`).join(', ')}; the serving connection's page cache ${cache}`;
  } finally {
    db.close();
  }
}

/** The tables a call meets in a PostgreSQL schema, with their indexes, and shared_buffers. */
export async function postgresSizes(url: string, schema: string, tables: readonly string[]): Promise<string> {
  const c = new pg.Client({ connectionString: url, application_name: 'toolgate_bench_sizes' });
  c.on('error', () => {});
  try {
    await c.connect();
    const r = await c.query<{ name: string; heap: string; indexes: string }>(
      `SELECT c.relname AS name, pg_table_size(c.oid) AS heap, pg_indexes_size(c.oid) AS indexes
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relname = ANY($2) ORDER BY c.relname`,
      [schema, tables],
    );
    const buffers = (await c.query<{ s: string }>("SELECT current_setting('shared_buffers') AS s")).rows[0]!
      .s;
    const mib = (b: string) => `${(Number(b) / 2 ** 20).toFixed(1)} MiB`;
    return `${r.rows.map((t) => `${t.name} ${mib(t.heap)} + indexes ${mib(t.indexes)}`).join(', ')}; shared_buffers ${buffers}`;
  } catch (err) {
    return `? (${String(err)})`;
  } finally {
    await c.end().catch(() => {});
  }
}
