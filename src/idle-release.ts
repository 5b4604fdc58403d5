/**
 * @module Gives the young generation's memory back once the server has been idle for a while: one
 * full garbage collection (`global.gc`, there with `npm start`'s `--expose-gc`), once per idle spell.
 *
 * Why: `npm start`'s `--max-semi-space-size` lets the young generation grow to two semi-spaces of
 * that size, which keeps scavenges rare under load; start-up alone grows it that far, and V8 never
 * hands those pages back on its own while nothing allocates. A full collection does shrink it (to
 * 1 MiB) when the allocation rate V8 has seen over its last few seconds is low, which is why it
 * waits for a whole interval without a request, not merely a quiet moment: 15-25 MiB of resident
 * memory given back in ~50 ms of collection while nothing is waiting. It runs once, not again until
 * a request has come and gone.
 */

/** How long without a request `npm start`'s server waits before it gives the memory back. */
export const IDLE_RELEASE_MS = 5_000;

/** Starts a repeating timer that does not keep the process alive; returns its cancel. */
export type Every = (ms: number, tick: () => void) => () => void;

export interface IdleReleaseOptions {
  /** The full collection; `globalThis.gc` under `--expose-gc`. */
  gc: () => void;
  /** How long without a request counts as idle. */
  idleMs: number;
  every?: Every;
}

const systemEvery: Every = (ms, tick) => {
  const timer = setInterval(tick, ms);
  timer.unref();
  return () => clearInterval(timer);
};

export class IdleRelease {
  /** True from start: start-up allocates as much as a burst of traffic. */
  private busy = true;
  private released = false;
  private cancel: (() => void) | null = null;

  constructor(private readonly options: IdleReleaseOptions) {}

  /** A request arrived: the next interval is not idle. Costs one assignment. */
  readonly touch = (): void => {
    this.busy = true;
  };

  start(): void {
    if (this.cancel) return;
    this.cancel = (this.options.every ?? systemEvery)(this.options.idleMs, () => this.tick());
  }

  stop(): void {
    this.cancel?.();
    this.cancel = null;
  }

  private tick(): void {
    if (this.busy) {
      // Busy during the interval just ended: idle is counted from now.
      this.busy = false;
      this.released = false;
      return;
    }
    if (this.released) return;
    this.released = true;
    this.options.gc();
  }
}

/** The collection `--expose-gc` provides, or undefined when the flag is absent (then nothing runs). */
export function exposedGc(): (() => void) | undefined {
  const gc = (globalThis as { gc?: () => void }).gc;
  return typeof gc === 'function' ? () => gc() : undefined;
}
