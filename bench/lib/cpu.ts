/**
 * @module CPU time of processes on this machine, from /proc (Linux; elsewhere every figure is null).
 * The bench, the servers and a local PostgreSQL share the same few cores: how much of them each one
 * used during a round says which one the throughput ran out of.
 */
import { readFileSync } from 'node:fs';

/** USER_HZ: the unit of /proc/<pid>/stat times, 100 on every Linux architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) that process `pid` has used so far; null when it cannot be read. */
export function cpuSeconds(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields 3.. follow the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const user = Number(fields[11]);
    const system = Number(fields[12]);
    return Number.isFinite(user) && Number.isFinite(system) ? (user + system) / TICKS_PER_SECOND : null;
  } catch {
    return null;
  }
}

/** The command line of `pid` on this machine, or null (no such process, or not Linux). */
export function commandLine(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return null;
  }
}

/** CPU seconds of this process (the load generator runs in it). */
export function ownCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/**
 * CPU seconds the whole machine has spent busy so far (every state but idle and iowait, summed over
 * the cores), from /proc/stat; null when it cannot be read. Minus what the bench's own processes
 * used, that is the CPU taken by everything else on the machine: noise, on a shared machine.
 */
export function machineBusySeconds(): number | null {
  const t = machineTicks();
  if (!t) return null;
  // user nice system idle iowait irq softirq steal: busy is all but idle, iowait and steal (time
  // the hypervisor gave to other machines); guest time is already counted in user and nice.
  const busy = t.slice(0, 8).reduce((a, b) => a + b, 0) - (t[3] ?? 0) - (t[4] ?? 0) - (t[7] ?? 0);
  return Number.isFinite(busy) ? busy / TICKS_PER_SECOND : null;
}

/**
 * CPU seconds so far that this virtual machine's cores were ready to run but the hypervisor ran
 * another machine instead (steal, from /proc/stat); null when it cannot be read. A round that lost
 * cores this way measured a slower machine than its neighbours did.
 */
export function machineStealSeconds(): number | null {
  const steal = machineTicks()?.[7];
  return steal !== undefined && Number.isFinite(steal) ? steal / TICKS_PER_SECOND : null;
}

/** The fields of /proc/stat's "cpu" line (ticks summed over the cores), or null. */
function machineTicks(): number[] | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    return line.trim().split(/\s+/).slice(1).map(Number);
  } catch {
    return null;
  }
}
