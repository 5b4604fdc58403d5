/**
 * @module Peak resident memory of the processes under load, from /proc (Linux; elsewhere null).
 * At the start of a measurement the kernel's high-water mark (VmHWM) of each process is reset to its
 * current RSS (`echo 5 > /proc/<pid>/clear_refs`, Linux 4.0+, allowed on our own children), so VmHWM
 * at the end is the true peak during the measurement, however brief. VmRSS is also sampled every
 * 100 ms, which is the figure used where the reset is not allowed.
 */
import { readFileSync, writeFileSync } from 'node:fs';

/** `VmRSS` and `VmHWM` of `pid` in KiB, or null when they cannot be read. */
export function memoryKib(pid: number | undefined): { rss: number; hwm: number } | null {
  if (pid === undefined) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(status);
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(status);
    if (!rss || !hwm) return null;
    return { rss: Number(rss[1]), hwm: Number(hwm[1]) };
  } catch {
    return null;
  }
}

/** Resets the high-water mark of `pid` to its current RSS; false when not allowed or not Linux. */
export function resetPeak(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface PeakMemory {
  /** Peak RSS during the measurement, MiB (VmHWM after a reset, else the highest sample). */
  peakMib: number | null;
  /** How the peak was taken. */
  source: 'VmHWM' | 'VmRSS sampled' | null;
  /** The highest 100 ms VmRSS sample, MiB. */
  sampledMib: number | null;
  /** VmHWM since the process started (including start-up and seeding), MiB. */
  lifetimeMib: number | null;
}

const mib = (kib: number) => Math.round((kib / 1024) * 10) / 10;

/** Watches the peak RSS of some processes from start() to stop(). */
export class PeakWatch {
  private timer: NodeJS.Timeout | null = null;
  private readonly sampled = new Map<number, number>();
  private readonly reset = new Map<number, boolean>();
  private readonly lifetime = new Map<number, number>();

  constructor(private readonly pids: readonly (number | undefined)[]) {}

  start(): void {
    for (const pid of this.pids) {
      if (pid === undefined) continue;
      // The lifetime peak must be read before it is reset.
      const before = memoryKib(pid);
      if (before) this.lifetime.set(pid, before.hwm);
      this.reset.set(pid, resetPeak(pid));
      this.sampled.set(pid, memoryKib(pid)?.rss ?? 0);
    }
    this.timer = setInterval(() => this.sample(), 100);
    this.timer.unref();
  }

  private sample(): void {
    for (const pid of this.pids) {
      if (pid === undefined) continue;
      const m = memoryKib(pid);
      if (m) this.sampled.set(pid, Math.max(this.sampled.get(pid) ?? 0, m.rss));
    }
  }

  /** Stops watching; one figure per pid, in the order given. */
  stop(): PeakMemory[] {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.sample();
    return this.pids.map((pid) => {
      const m = memoryKib(pid);
      const sampled = pid === undefined ? undefined : this.sampled.get(pid);
      const sampledMib = sampled ? mib(sampled) : null;
      const lifetime = Math.max(m?.hwm ?? 0, pid === undefined ? 0 : (this.lifetime.get(pid) ?? 0));
      if (m && pid !== undefined && this.reset.get(pid))
        return {
          peakMib: mib(Math.max(m.hwm, sampled ?? 0)),
          source: 'VmHWM',
          sampledMib,
          lifetimeMib: lifetime ? mib(lifetime) : null,
        };
      return {
        peakMib: sampledMib,
        source: sampledMib === null ? null : 'VmRSS sampled',
        sampledMib,
        lifetimeMib: lifetime ? mib(lifetime) : null,
      };
    });
  }
}
