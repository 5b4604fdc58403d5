/** @module The seeding's progress lines (lib/seeding.ts): at most one every 2 seconds, with the rates. */
import type { FairUseCounts } from './seed-fair-use.js';

/** Progress lines, at most one every 2 seconds, and the rates. */
export class Meter {
  private readonly t0 = performance.now();
  private last = this.t0;
  private lastDone = 0;

  constructor(
    private readonly total: number,
    private readonly kpa: number,
    private readonly fairUse: FairUseCounts,
    private readonly progress: (line: string) => void,
  ) {}

  say(line: string): void {
    this.progress(line);
  }

  done(accounts: number): void {
    const now = performance.now();
    if (now - this.last < 2_000 && accounts < this.total) return;
    const rate = ((accounts - this.lastDone) / (now - this.last)) * 1000;
    const all = (accounts / (now - this.t0)) * 1000;
    const n = (x: number) => Math.round(x).toLocaleString('en-US');
    this.progress(
      `seed: ${n(accounts)}/${n(this.total)} accounts, ${n(accounts * this.kpa)} keys, ${n(this.fairUse.rows)} fair-use rows, ${((now - this.t0) / 1000).toFixed(1)} s; now ${n(rate)} accounts/s + ${n(rate * this.kpa)} keys/s (overall ${n(all)} + ${n(all * this.kpa)})`,
    );
    this.last = now;
    this.lastDone = accounts;
  }
}
