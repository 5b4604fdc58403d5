/**
 * @module One call to an upstream, read through undici's dispatch API: the status, then the body
 * collected up to a cap, with the whole call bounded by one timer. No AbortSignal, response stream
 * or async iterator per call: a per-call AbortSignal outlived its call often enough to be promoted
 * to the old generation (about 650 bytes a call, `--trace-gc-nvp`), which made full collections
 * come every few thousand calls (docs/performance.md).
 */
import type { Dispatcher } from 'undici';

/** How a call ended, before its answer is interpreted (forward.ts). */
export type Exchanged =
  /** Answered in full: the final status and the body as text. */
  | { kind: 'answered'; status: number; text: string }
  /** The body passed the cap (declared or received); the status, if it came. */
  | { kind: 'oversized'; status: number }
  /** No complete answer within the time allowed. */
  | { kind: 'timeout' }
  /** The connection or the exchange failed. */
  | { kind: 'failed'; error: Error };

/** The reasons toolgate aborts a call with (undici reports them back through onResponseError, ignored once settled). */
const TIMED_OUT = new Error('toolgate: upstream call timed out');
const TOO_LARGE = new Error('toolgate: upstream answer too large');

/**
 * Starts `opts` on `dispatcher` and settles once, with the first of: the answer read in full, the
 * cap passed, the time up, a failure. Whatever undici reports after that is ignored.
 */
export function exchange(
  dispatcher: Dispatcher,
  opts: Dispatcher.DispatchOptions,
  maxBytes: number,
  timeoutMs: number,
): Promise<Exchanged> {
  return new Promise((resolve) => {
    const handler = new ExchangeHandler(maxBytes, timeoutMs, resolve);
    try {
      dispatcher.dispatch(opts, handler);
    } catch (error) {
      handler.onResponseError(null, error as Error);
    }
  });
}

class ExchangeHandler implements Dispatcher.DispatchHandler {
  private readonly timer: NodeJS.Timeout;
  private controller: Dispatcher.DispatchController | null = null;
  private settled = false;
  /** Set when the time was up before undici handed over the call's controller. */
  private timedOut = false;
  private status = 0;
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly maxBytes: number,
    timeoutMs: number,
    private readonly resolve: (outcome: Exchanged) => void,
  ) {
    this.timer = setTimeout(() => this.timeUp(), timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.timedOut) controller.abort(TIMED_OUT);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    // 1xx answers are informational: the final status follows.
    if (statusCode < 200) return;
    this.status = statusCode;
    const length = headers['content-length'];
    const declared = typeof length === 'string' ? Number(length) : Number.NaN;
    if (Number.isFinite(declared) && declared > this.maxBytes) {
      this.settle({ kind: 'oversized', status: statusCode });
      controller.abort(TOO_LARGE);
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      this.settle({ kind: 'oversized', status: this.status });
      controller.abort(TOO_LARGE);
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    const text =
      this.chunks.length === 1
        ? (this.chunks[0] as Buffer).toString('utf8')
        : Buffer.concat(this.chunks, this.size).toString('utf8');
    this.settle({ kind: 'answered', status: this.status, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    // An abort of toolgate's own has settled already; anything else is the upstream's failure.
    this.settle({ kind: 'failed', error });
  }

  /** Ends the call as timed out, and aborts it: at once, or as soon as undici starts it (a connect under way). */
  private timeUp(): void {
    this.settle({ kind: 'timeout' });
    this.timedOut = true;
    this.controller?.abort(TIMED_OUT);
  }

  private settle(outcome: Exchanged): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(outcome);
  }
}
