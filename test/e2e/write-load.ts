/**
 * A bounded write load on a server process, for the fault tests: workers alternating consumptions
 * (admin usage, each with its own idempotency key) and metered catalogue tool calls, every answer
 * recorded with when its request started and ended.
 */

import { send } from '../calls.js';
import { E2E_ADMIN_TOKEN } from './admin-client.js';

export interface LoadResult {
  kind: 'consumption' | 'tool';
  /** The consumption's idempotency key. */
  key: string;
  startedAt: number;
  endedAt: number;
  /** 0 when no HTTP answer came (refused, reset, or 10 s without one). */
  status: number;
  code?: string;
}

export interface WriteLoadOptions {
  url: string;
  accountId: string;
  /** An API key of the account, for the tool calls. */
  key: string;
  tool: string;
  workers: number;
  /** Stops by itself after this long whatever happens (bounded load). */
  maxMs?: number;
}

export class WriteLoad {
  private readonly done: LoadResult[] = [];
  private running: Promise<void>[] = [];
  private stopped = false;
  private seq = 0;
  private deadline = 0;

  constructor(private readonly o: WriteLoadOptions) {}

  /** Starts the workers, unless they run already. */
  start(): void {
    if (this.running.length > 0) return;
    this.stopped = false;
    this.deadline = Date.now() + (this.o.maxMs ?? 180_000);
    for (let w = 0; w < this.o.workers; w++) this.running.push(this.worker(w));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running);
    this.running = [];
  }

  results(): readonly LoadResult[] {
    return this.done;
  }

  /** Requests that started at or after `from` and were answered by `to`. */
  between(from: number, to: number): LoadResult[] {
    return this.done.filter((r) => r.startedAt >= from && r.endedAt <= to);
  }

  /** When the first request started at or after `since` was answered 200, if one was. */
  firstServedSince(since: number): number | undefined {
    let first: number | undefined;
    for (const r of this.done)
      if (r.startedAt >= since && r.status === 200 && (first === undefined || r.endedAt < first))
        first = r.endedAt;
    return first;
  }

  private async worker(w: number): Promise<void> {
    for (let i = 0; !this.stopped && Date.now() < this.deadline; i++) {
      const kind = (i + w) % 2 === 0 ? 'consumption' : 'tool';
      const result = await this.send(kind);
      this.done.push(result);
      // A refused connection answers at once: no busy loop against a server that is gone.
      if (result.status !== 200) await new Promise((r) => setTimeout(r, 10));
    }
  }

  private async send(kind: LoadResult['kind']): Promise<LoadResult> {
    const key = `load-${++this.seq}`;
    const startedAt = Date.now();
    const [path, token, body] =
      kind === 'consumption'
        ? [
            `/admin/v1/accounts/${this.o.accountId}/usage`,
            E2E_ADMIN_TOKEN,
            { category: 'enrich', records: 1, idempotency_key: key },
          ]
        : [`/api/v1/tools/${this.o.tool}`, this.o.key, {}];
    try {
      const res = await send(this.o.url, token, 'POST', path, body, { signal: AbortSignal.timeout(10_000) });
      const answer = (res.data ?? {}) as { code?: string };
      return {
        kind,
        key,
        startedAt,
        endedAt: Date.now(),
        status: res.status,
        ...(answer.code ? { code: answer.code } : {}),
      };
    } catch {
      return { kind, key, startedAt, endedAt: Date.now(), status: 0 };
    }
  }
}
