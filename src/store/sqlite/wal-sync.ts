/**
 * @module Durable commits without blocking the event loop. The SQLite store commits with
 * synchronous=NORMAL (the commit itself does not wait for the disk) and then, before it answers,
 * waits here for an fdatasync of the WAL file run on libuv's thread pool. Commits that arrive while
 * one fdatasync runs share the next one: each waiter is released only by an fdatasync that started
 * after it asked, so whatever it committed before asking is on disk when it is released.
 *
 * An fdatasync that fails leaves the file's state unknown (a later one may succeed without the lost
 * pages), so a failure is final: every waiting and later write fails as unavailable until toolgate
 * is restarted, when SQLite recovers from what is really on disk.
 */
import { close, fdatasync, openSync } from 'node:fs';
import { StoreUnavailableError } from '../../domain/errors.js';

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

export class WalSync {
  private fd: number | undefined;
  private waiting: Waiter[] = [];
  private running = false;
  private whenIdle: (() => void) | undefined;
  private atNext: (() => void) | undefined;
  /** Set once an fdatasync failed; every write fails with it from then on. */
  failure: StoreUnavailableError | undefined;
  /** fdatasync calls completed (for tests and diagnostics). */
  syncs = 0;

  constructor(private readonly walPath: string) {}

  /** Resolves once everything committed before this call is on disk. */
  durable(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.running) this.start();
    });
  }

  /** Whether an fdatasync is under way. */
  get busy(): boolean {
    return this.running;
  }

  /**
   * Runs `commit` when the fdatasync under way completes, before its waiters are released and
   * before the next one starts: what `commit` commits and asks durable() for in the same synchronous
   * step (the store's writes do) joins that next fdatasync. A durable() asked later waits, as any
   * does, for an fdatasync that starts after it. One at a time, only while busy.
   */
  beforeNext(commit: () => void): void {
    if (!this.running || this.atNext) throw new Error('beforeNext: only once, while an fdatasync runs');
    this.atNext = commit;
  }

  /** Waits for the fdatasync under way (and those queued behind it), then closes the file. */
  async close(): Promise<void> {
    // Idle, and no commit held for the fdatasync that just ended about to ask for the next one.
    while (this.running) {
      await new Promise<void>((resolve) => (this.whenIdle = resolve));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (this.fd !== undefined) {
      const fd = this.fd;
      this.fd = undefined;
      await new Promise<void>((resolve) => close(fd, () => resolve()));
    }
  }

  private start(): void {
    this.running = true;
    const batch = this.waiting;
    this.waiting = [];
    let fd: number;
    try {
      // Opened at the first commit, when the WAL exists; SQLite keeps the same file while any
      // connection is open, and this process holds one until close().
      fd = this.fd ??= openSync(this.walPath, 'r');
    } catch (err) {
      this.finish(batch, err as NodeJS.ErrnoException);
      return;
    }
    fdatasync(fd, (err) => this.finish(batch, err));
  }

  private finish(batch: Waiter[], err: NodeJS.ErrnoException | null): void {
    this.running = false;
    if (err) {
      this.failure ??= new StoreUnavailableError(
        `SQLite unavailable: could not make commits durable (fdatasync of ${this.walPath}: ${err.code ?? err.message}); restart toolgate once the disk is sound`,
        { cause: err },
      );
    } else {
      this.syncs++;
    }
    const commit = this.atNext;
    this.atNext = undefined;
    commit?.();
    for (const w of batch) {
      if (this.failure) w.reject(this.failure);
      else w.resolve();
    }
    if (this.failure) {
      for (const w of this.waiting.splice(0)) w.reject(this.failure);
    } else if (this.waiting.length > 0) {
      this.start();
      return;
    }
    this.whenIdle?.();
    this.whenIdle = undefined;
  }
}
