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
  return pid === undefined ? null : statTimes(pid, 11);
}

/** The command line of `pid` on this machine, or null (no such process, or not Linux). */
export function commandLine(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return null;
  }
}

/** CPU seconds of this process (the bench itself, which drives wrk). */
export function ownCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/**
 * CPU seconds of this process's children that have exited and been reaped (a wrk run, once it has
 * ended: Node reaps a child before its 'exit' event); null when it cannot be read (not Linux).
 */
export function exitedChildrenCpuSeconds(): number | null {
  return statTimes(process.pid, 13);
}

/**
 * utime + stime (at 11), or cutime + cstime (at 13), of /proc/<pid>/stat, in seconds. The command
 * name (field 2) may hold spaces and parentheses: fields 3.. follow the last ')'.
 */
function statTimes(pid: number, at: 11 | 13): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const a = Number(fields[at]);
    const b = Number(fields[at + 1]);
    return Number.isFinite(a) && Number.isFinite(b) ? (a + b) / TICKS_PER_SECOND : null;
  } catch {
    return null;
  }
}

/** The whole machine's CPU seconds so far (summed over the cores), from one read of /proc/stat. */
export interface MachineSeconds {
  /**
   * Busy: every state but idle, iowait and steal. Minus what the bench's own processes used, that
   * is the CPU taken by everything else on the machine: noise, on a shared machine.
   */
  busy: number;
  /**
   * Steal: time this virtual machine's cores were ready to run but the hypervisor ran another
   * machine instead. A round that lost cores this way measured a slower machine than its neighbours.
   */
  steal: number;
}

/** The machine's busy and stolen CPU seconds so far; null when they cannot be read (not Linux). */
export function machineSeconds(): MachineSeconds | null {
  let t: number[];
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    t = line.trim().split(/\s+/).slice(1).map(Number);
  } catch {
    return null;
  }
  // user nice system idle iowait irq softirq steal; guest time is already counted in user and nice.
  const steal = t[7] ?? 0;
  const busy = t.slice(0, 8).reduce((a, b) => a + b, 0) - (t[3] ?? 0) - (t[4] ?? 0) - steal;
  return Number.isFinite(busy) && Number.isFinite(steal)
    ? { busy: busy / TICKS_PER_SECOND, steal: steal / TICKS_PER_SECOND }
    : null;
}
