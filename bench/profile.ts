/**
 * @module `node .bench/bench/profile.js <file.cpuprofile> [--top n]`: where a toolgate process spent
 * its CPU, from a V8 CPU profile (`npm run bench -- --cpu-prof <dir>`): self time by package (the
 * toolgate code in dist/, each package in node_modules, Node's internals, the garbage collector, idle)
 * and the functions with the most self time.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** What a frame belongs to: toolgate (dist/<dir>), a package, node internals, or a V8 pseudo-frame. */
function owner(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName.startsWith('(')) return functionName; // (garbage collector), (idle), (program)
    return 'native (V8 builtins, C++ bindings)';
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const dist = /\/dist\/([^/]+)\//.exec(url);
  if (dist) return `toolgate dist/${dist[1]}`;
  if (/\/dist\/[^/]+\.js$/.test(url)) return 'toolgate dist/';
  if (url.startsWith('node:')) return 'node internals';
  return url;
}

function main(): number {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: { top: { type: 'string' } },
  });
  const file = positionals[0];
  if (!file) {
    process.stderr.write('Usage: node .bench/bench/profile.js <file.cpuprofile> [--top n]\n');
    return 2;
  }
  const top = Number(values.top ?? 25);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  // Self time per node: the time deltas of the samples that landed in it.
  const self = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    // timeDeltas[i] is the time before sample i; attribute the gap after a sample to it.
    const dt = deltas[i + 1] ?? 0;
    self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + Math.max(0, dt));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = profile.nodes
    .filter((n) => n.callFrame.functionName === '(idle)')
    .reduce((sum, n) => sum + (self.get(n.id) ?? 0), 0);
  const busy = total - idle;
  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const t = self.get(node.id) ?? 0;
    if (t === 0 || node.callFrame.functionName === '(idle)') continue;
    const o = owner(node.callFrame);
    byOwner.set(o, (byOwner.get(o) ?? 0) + t);
    const f = node.callFrame;
    const where = f.url ? `${f.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${f.lineNumber + 1}` : '';
    const name = `${f.functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + t);
  }
  const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
  const pct = (us: number) => `${((us / busy) * 100).toFixed(1).padStart(5)}%`;
  const out: string[] = [];
  out.push(
    `${file}: ${(total / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(1)} s busy (${((busy / total) * 100).toFixed(0)}%: running, or blocked in a synchronous call such as an fsync), ${(idle / 1e6).toFixed(1)} s idle`,
  );
  out.push('', 'self time while busy, by owner:');
  for (const [o, t] of [...byOwner.entries()].sort((a, b) => b[1] - a[1]))
    out.push(`  ${ms(t)} ${pct(t)}  ${o}`);
  out.push('', `top ${top} functions by self time:`);
  for (const [f, t] of [...byFunction.entries()].sort((a, b) => b[1] - a[1]).slice(0, top))
    out.push(`  ${ms(t)} ${pct(t)}  ${f}`);
  process.stdout.write(`${out.join('\n')}\n`);
  return 0;
}

process.exitCode = main();
