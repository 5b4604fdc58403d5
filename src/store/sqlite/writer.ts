/**
 * @module The SQLite writer thread as the event loop sees it: started at a serving process's first
 * batch of consumptions that charges, it takes batches the event loop decided (their writes as plain data:
 * consumption-writes.ts) and answers each once it is committed and on disk, or why not
 * (writer-thread.ts). The statements, the COMMIT's WAL writes and the fdatasync, a charged call's
 * costliest part, run beside the event loop instead of on it.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Warn } from '../store.js';
import { CONSUMPTION_SQL } from './consumption-writes.js';
import { COUNT_COMMIT_SQL, type OwnCommits } from './own-commits.js';
import { WRITER_SOURCE, type WriterReply } from './writer-thread.js';

/** How long the thread's BEGIN waits for another process's write lock (the event loop's own bound). */
const LOCK_WAIT_MS = 5000;
const CLOSE_WAIT_MS = 5000;

type Failed = Extract<WriterReply, { kind: 'failed' }>;

export class SqliteWriter {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, (reply: WriterReply) => void>();
  private closing = false;
  /** The thread answered that it is ready: batches can go to it. */
  ready = false;
  /** Resolves once the thread is ready (true) or gone (false). */
  readonly started: Promise<boolean>;
  private markStarted: (ready: boolean) => void = () => {};
  /** Batches the thread committed, and those it did not write for what changed meanwhile (diagnostics and tests). */
  committed = 0;
  conflicts = 0;
  /** Why the thread is gone (it could not start, or stopped): batches are committed on the event loop. */
  failure: Error | undefined;

  constructor(
    path: string,
    readonly own: OwnCommits,
    private readonly warn?: Warn,
    /** Another thread checkpoints (checkpointer.ts): the writer's commits do not. */
    checkpointsElsewhere = false,
  ) {
    this.started = new Promise<boolean>((resolve) => {
      this.markStarted = resolve;
    });
    let worker: Worker;
    try {
      worker = new Worker(WRITER_SOURCE, {
        eval: true,
        // The thread's own V8 isolate would otherwise take npm start's semi-space size too (V8's
        // flags are the process's); it allocates little but the batches it is sent, so a young
        // generation of 4 MiB scavenges often and cheaply, and keeps the peak RSS under load down.
        resourceLimits: { maxYoungGenerationSizeMb: 4 },
        workerData: {
          // A page cache of 4 MiB, not the driver's 16: it only writes, along paths the OS's page
          // cache serves again in a microsecond or two, and a full one was most of its memory.
          cacheKib: 4096,
          driver: createRequire(import.meta.url).resolve('better-sqlite3'),
          path,
          shared: own.shared.buffer,
          sql: CONSUMPTION_SQL,
          countSql: COUNT_COMMIT_SQL,
          busyMs: LOCK_WAIT_MS,
          littleEndian: own.littleEndian,
          autocheckpoint: checkpointsElsewhere ? 0 : 1000,
        },
      });
    } catch (err) {
      this.fail(err as Error);
      return;
    }
    // Batches under way keep the process alive through their promises' callers; an idle thread does not.
    worker.unref();
    worker.on('message', (message: 'ready' | WriterReply[]) => this.onMessage(message));
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => {
      if (!this.closing) this.fail(new Error(`the SQLite writer thread stopped (exit code ${code})`));
    });
    this.worker = worker;
  }

  /** Batches sent and not yet answered. */
  get inFlight(): number {
    return this.waiting.size;
  }

  /** Sends a batch decided under `epoch`; answered once the thread has committed it and it is on disk, or why not. */
  submit(epoch: number, ops: unknown[]): Promise<WriterReply> {
    const id = this.nextId++;
    return new Promise<WriterReply>((resolve) => {
      if (!this.worker || this.failure) {
        resolve(this.failedReply(id));
        return;
      }
      this.waiting.set(id, resolve);
      this.worker.postMessage({ id, epoch, ops });
    });
  }

  private onMessage(message: 'ready' | WriterReply[]): void {
    if (message === 'ready') {
      this.ready = true;
      this.markStarted(true);
      return;
    }
    for (const reply of message) {
      if (reply.kind === 'committed') this.committed++;
      else if (reply.kind === 'conflict') this.conflicts++;
      const resolve = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      resolve?.(reply);
    }
  }

  private failedReply(id: number): Failed {
    const message = this.failure?.message ?? 'the SQLite writer thread is not running';
    return { id, kind: 'failed', message, code: undefined };
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.ready = false;
    this.markStarted(false);
    this.worker = undefined;
    if (!this.closing)
      this.warn?.('SQLite consumptions are committed on the event loop: their writer thread failed', {
        err: { message: err.message },
      });
    for (const [id, resolve] of this.waiting) resolve(this.failedReply(id));
    this.waiting.clear();
  }

  /** Waits for the batches under way, then stops the thread (its connection closed). */
  async close(): Promise<void> {
    this.closing = true;
    const worker = this.worker;
    if (!worker) return;
    worker.ref();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // Sent after every batch: the thread answers them first.
    worker.postMessage('close');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), CLOSE_WAIT_MS);
    });
    const ended = await Promise.race([exited, timeout]);
    clearTimeout(timer);
    if (ended === 'timeout') await worker.terminate();
    this.worker = undefined;
    this.fail(new Error('the SQLite store is closed'));
    this.own.close();
  }
}
