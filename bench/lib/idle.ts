/**
 * @module The idle RSS row (`--only idle`): toolgate as it ships, on a scratch SQLite database,
 * started and left alone past its idle release (src/idle-release.ts), then its VmRSS read and split
 * into anonymous and file-backed pages; beside it the bare-Fastify baseline, read alike. What the
 * memory is made of comes from a second toolgate started the same way with bench/idle-probe.ts
 * preloaded: Node's own counters and a heap snapshot, summed by what its objects are. The first
 * process is never probed, so the figure judged is that of toolgate as it ships.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Child } from './processes.js';
import { waitForOutput } from './processes.js';
import { startBaseline, startToolgateSqlite } from './targets.js';

/** The idle release runs 5-10 s after the last request (the bench's /healthz poll); then a margin. */
export const IDLE_WAIT_MS = 16_000;

/** The product's target for a server at rest. */
export const IDLE_RSS_MIB = 100;

export interface RssSplit {
  rssMib: number;
  /** RssAnon: the heaps (V8's, the allocator's, SQLite's), stacks. */
  anonMib: number;
  /** RssFile: the node binary, shared libraries and better-sqlite3's addon, as far as paged in. */
  fileMib: number;
}

export interface HeapPart {
  /** An object's constructor name, or `(type)` for V8's other node kinds (code, strings, arrays...). */
  name: string;
  mib: number;
  count: number;
}

export interface IdleResult {
  toolgate: RssSplit;
  baseline: RssSplit;
  targetMib: number;
  waitedMs: number;
  /** process.memoryUsage() of the probed twin, MiB, its V8 spaces' physical sizes and its code's. */
  usage: Record<string, number> | null;
  /** The probed twin's heap snapshot: its total self size and the ten largest parts. */
  snapshot: { totalMib: number; top: HeapPart[] } | null;
}

const mib = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

/** VmRSS, RssAnon and RssFile of `pid`, from /proc (Linux). */
export function rssSplit(pid: number | undefined): RssSplit | null {
  if (pid === undefined) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    const [rss, anon, file] = [kib('VmRSS'), kib('RssAnon'), kib('RssFile')];
    if (![rss, anon, file].every(Number.isFinite)) return null;
    return { rssMib: mib(rss * 1024), anonMib: mib(anon * 1024), fileMib: mib(file * 1024) };
  } catch {
    return null;
  }
}

export async function runIdle(progress: (line: string) => void): Promise<IdleResult | null> {
  const probe = join(import.meta.dirname, '..', 'idle-probe.js');
  progress(
    `bench: idle: starting toolgate (as shipped), a probed twin and the baseline; ${IDLE_WAIT_MS / 1000} s at rest...`,
  );
  const [toolgate, twin, baseline] = await Promise.all([
    startToolgateSqlite(),
    startToolgateSqlite(null, undefined, ['--import', probe]),
    startBaseline(),
  ]);
  try {
    await sleep(IDLE_WAIT_MS);
    const mine = rssSplit(toolgate.child.process.pid);
    const bare = rssSplit(baseline.child.process.pid);
    if (!mine || !bare) return null;
    const { usage, snapshot } = await probeTwin(twin.child);
    return {
      toolgate: mine,
      baseline: bare,
      targetMib: IDLE_RSS_MIB,
      waitedMs: IDLE_WAIT_MS,
      usage,
      snapshot,
    };
  } finally {
    await Promise.all([toolgate.child.stop(), twin.child.stop(), baseline.child.stop()]);
  }
}

async function probeTwin(child: Child): Promise<Pick<IdleResult, 'usage' | 'snapshot'>> {
  child.process.kill('SIGUSR2');
  const used = await waitForOutput(child, /idle-probe usage (\{.*\})\n/);
  const written = await waitForOutput(child, /idle-probe snapshot (\S+)\n/, 120_000);
  const raw = JSON.parse(used[1]!) as Record<string, unknown>;
  const usage: Record<string, number> = {};
  // memoryUsage's figures as they are; the spaces' and the code statistics' under their group's name.
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v === 'number') usage[k] = mib(v);
    else if (v && typeof v === 'object')
      for (const [part, bytes] of Object.entries(v as Record<string, number>))
        if (bytes > 0) usage[`${k} ${part}`] = mib(bytes);
  }
  const file = written[1]!;
  try {
    return { usage, snapshot: summarise(JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshot) };
  } finally {
    rmSync(file, { force: true });
  }
}

/** The slice of V8's .heapsnapshot format read here. */
interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Self sizes summed by constructor (objects) or by node type (everything else); the ten largest. */
export function summarise(heap: HeapSnapshot): { totalMib: number; top: HeapPart[] } {
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const parts = new Map<string, { bytes: number; count: number }>();
  let total = 0;
  for (let i = 0; i < heap.nodes.length; i += fields.length) {
    const type = types[heap.nodes[i + typeAt]!] ?? '?';
    const name = type === 'object' ? (heap.strings[heap.nodes[i + nameAt]!] ?? '?') : `(${type})`;
    const size = heap.nodes[i + sizeAt]!;
    total += size;
    const part = parts.get(name) ?? { bytes: 0, count: 0 };
    part.bytes += size;
    part.count++;
    parts.set(name, part);
  }
  const top = [...parts.entries()]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, 10)
    .map(([name, p]) => ({ name, mib: mib(p.bytes), count: p.count }));
  return { totalMib: mib(total), top };
}
