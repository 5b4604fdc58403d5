/**
 * @module SQLite's checkpoints off the event loop. SQLite's automatic checkpoint runs in the
 * connection that commits, inside its commit: the WAL's pages copied back into the database file,
 * with an fsync of each file, all on the event loop. Under calls that charge tokens, whose commits
 * touch pages all over the file, the loop spent about an eighth of its time blocked in those fsyncs
 * (docs/performance.md). So a serving process watches how long its commits block the loop, and
 * once they block it for long enough within a second (the mark of checkpoints coming often), it
 * turns SQLite's automatic checkpoints off and has a worker thread, with a connection of its own,
 * run them instead. Until then it costs two clock reads a commit: a thread is some 9 MiB of memory,
 * and a server that mostly reads, or writes few pages, never needs one. The thread runs:
 *
 * - a PASSIVE checkpoint shortly after commits, which waits for no one: the event loop goes on
 *   serving and committing meanwhile;
 * - but a checkpoint that runs beside commits never catches up with them, and the WAL starts over
 *   from its beginning only when a write finds every frame copied back. So once the WAL has grown
 *   past `restartFrames`, this process holds its writes back (they wait in memory, the event loop
 *   does not) while the worker runs a RESTART checkpoint, and the next write starts the WAL over.
 *
 * Should the worker fail, the connection's own automatic checkpoints take over again (onFailure).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Warn } from '../store.js';

export interface CheckpointTuning {
  /** How long after a commit its checkpoint runs: the commits in between share it. */
  delayMs?: number;
  /** WAL frames (pages) past which the WAL is made to start over. */
  restartFrames?: number;
  /**
   * The thread starts once commits that took at least `slowCommitMs` have blocked the event loop
   * for `startBlockedMs` in all within one second (0: at the first commit).
   */
  slowCommitMs?: number;
  startBlockedMs?: number;
}

export interface CheckpointerOptions extends CheckpointTuning {
  /** The database file (in WAL mode). */
  path: string;
  /** Told when the thread starts: the connection's automatic checkpoints must stop. */
  onStart: () => void;
  /** Told once, when checkpoints can no longer run in the background. */
  onFailure: (err: Error) => void;
  /** Told of a checkpoint that failed (the next one is tried all the same). */
  warn?: Warn;
}

type Mode = 'passive' | 'restart';
type Reply =
  | { kind: 'done'; mode: Mode; log: number; checkpointed: number }
  | { kind: 'error'; mode: Mode; message: string };

/** 16 MB of 4 KiB pages: four times SQLite's own checkpoint threshold, so restarts (which hold writes) are rare. */
const DEFAULT_RESTART_FRAMES = 4000;
const DEFAULT_DELAY_MS = 100;
/**
 * A commit that runs SQLite's checkpoint takes milliseconds (its fsyncs); one without, a fraction of
 * one. 50 ms a second in such commits is 5% of the loop: checkpoints every fraction of a second,
 * where one every few seconds (a metered tool's commits) would not be worth a thread.
 */
const DEFAULT_SLOW_COMMIT_MS = 2;
const DEFAULT_START_BLOCKED_MS = 50;
/** How long the worker's RESTART waits for other processes' readers and writers. */
const RESTART_BUSY_MS = 1000;
/** Writes are never held longer than this, whatever the worker does. */
const MAX_HOLD_MS = 3000;
const CLOSE_WAIT_MS = 5000;

// A CommonJS script run with eval, so that it needs no file of its own beside the compiled code.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = ' + workerData.busyMs);
parentPort.on('message', (mode) => {
  if (mode === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const [r] = db.pragma(mode === 'restart' ? 'wal_checkpoint(RESTART)' : 'wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ kind: 'done', mode, log: r.log, checkpointed: r.checkpointed });
  } catch (err) {
    parentPort.postMessage({ kind: 'error', mode, message: String((err && (err.code || err.message)) || err) });
  }
});
`;

export class Checkpointer {
  private worker: Worker | undefined;
  private timer: NodeJS.Timeout | undefined;
  private holdTimer: NodeJS.Timeout | undefined;
  /** A checkpoint is under way in the worker. */
  private running = false;
  /** Committed to since the last checkpoint started. */
  private dirty = false;
  private closing = false;
  private releaseHeld: (() => void) | undefined;
  /** Set while a RESTART checkpoint runs: this process's writes wait for it. */
  held: Promise<void> | undefined;
  /** Checkpoints completed (for tests and diagnostics). */
  readonly done = { passive: 0, restart: 0 };
  /** The WAL's size in frames, and how many of them were copied back, at the last checkpoint. */
  last = { log: 0, checkpointed: 0 };

  /** Slow commits' time in the current second, before the thread starts. */
  private blockedMs = 0;
  private windowStart = 0;
  private failed = false;

  constructor(private readonly o: CheckpointerOptions) {}

  /** Whether checkpoints run in the background (false before the thread starts, and once it failed). */
  get active(): boolean {
    return this.worker !== undefined;
  }

  /**
   * After a commit that blocked the event loop for `ms` (now: performance.now()): before the thread
   * starts, counted towards starting it; after, a checkpoint within delayMs, unless one is already
   * due or under way.
   */
  committed(ms: number, now: number): void {
    if (this.worker) {
      this.dirty = true;
      if (!this.running && !this.timer) this.schedule();
      return;
    }
    if (this.failed || this.closing) return;
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.blockedMs = 0;
    }
    if (ms >= (this.o.slowCommitMs ?? DEFAULT_SLOW_COMMIT_MS)) this.blockedMs += ms;
    if (this.blockedMs >= (this.o.startBlockedMs ?? DEFAULT_START_BLOCKED_MS)) {
      this.startWorker();
      // The commits since this one are what the first checkpoint copies.
      if (this.worker) this.committed(0, now);
    }
  }

  /**
   * Starts the thread now, whatever the commits so far cost: for a process whose commits are made
   * by another connection (the writer thread's, which must not checkpoint in its commits either).
   */
  startNow(): void {
    if (!this.worker && !this.failed && !this.closing) this.startWorker();
  }

  private startWorker(): void {
    let worker: Worker;
    try {
      const driver = createRequire(import.meta.url).resolve('better-sqlite3');
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        // It allocates next to nothing (a checkpoint a turn): npm start's semi-spaces would be idle RSS.
        resourceLimits: { maxYoungGenerationSizeMb: 1 },
        workerData: { driver, path: this.o.path, busyMs: RESTART_BUSY_MS },
      });
    } catch (err) {
      // The connection's own checkpoints were never turned off: nothing to hand back.
      this.failed = true;
      this.o.warn?.('SQLite checkpoints stay on the event loop: their thread could not start', {
        err: { message: (err as Error).message },
      });
      return;
    }
    worker.unref();
    worker.on('message', (reply: Reply) => this.onReply(reply));
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => {
      if (!this.closing) this.fail(new Error(`the checkpoint thread stopped (exit code ${code})`));
    });
    this.worker = worker;
    this.o.onStart();
  }

  /** Stops checkpointing; the connection closed after this does the last one itself. */
  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.release();
    const worker = this.worker;
    this.worker = undefined;
    if (!worker) return;
    // Waited for with the thread and the timer holding the process open: a process with nothing else
    // left (a script, a server whose sockets are closed) would otherwise end here, with exit code 13.
    worker.ref();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), CLOSE_WAIT_MS);
    });
    const ended = await Promise.race([exited, timeout]);
    clearTimeout(timer);
    if (ended === 'timeout') await worker.terminate();
  }

  private schedule(): void {
    this.timer = setTimeout(this.runPassive, this.o.delayMs ?? DEFAULT_DELAY_MS);
    this.timer.unref();
  }

  private readonly runPassive = () => {
    this.timer = undefined;
    this.start('passive');
  };

  private start(mode: Mode): void {
    if (!this.worker) return;
    this.dirty = false;
    this.running = true;
    this.worker.postMessage(mode);
  }

  private onReply(reply: Reply): void {
    this.running = false;
    if (reply.kind === 'error') {
      this.o.warn?.('SQLite checkpoint failed; tried again after the next write', {
        mode: reply.mode,
        err: { message: reply.message },
      });
    } else {
      this.done[reply.mode]++;
      this.last = { log: reply.log, checkpointed: reply.checkpointed };
      if (reply.mode === 'passive' && reply.log >= (this.o.restartFrames ?? DEFAULT_RESTART_FRAMES)) {
        this.restart();
        return;
      }
    }
    this.release();
    if (this.dirty) this.schedule();
  }

  /**
   * Holds this process's writes and has the worker run a RESTART checkpoint. Reached from a message
   * event, so no transaction of this process is open (they are synchronous): the checkpoint waits
   * only for other processes.
   */
  private restart(): void {
    this.held = new Promise<void>((resolve) => {
      this.releaseHeld = resolve;
    });
    // Not unref'd: held writes are work under way, and a process with nothing else to wait for
    // (no socket: a script, a benchmark) would otherwise end with them unanswered.
    this.holdTimer = setTimeout(() => this.release(), MAX_HOLD_MS);
    this.start('restart');
  }

  private release(): void {
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    const release = this.releaseHeld;
    this.releaseHeld = undefined;
    this.held = undefined;
    release?.();
  }

  private fail(err: Error): void {
    if (!this.worker) return;
    this.worker = undefined;
    this.failed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.running = false;
    this.release();
    this.o.onFailure(err);
  }
}
