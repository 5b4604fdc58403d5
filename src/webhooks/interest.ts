/**
 * @module Which fair-use thresholds some endpoint wants, per account, kept in memory for the hot
 * path: a consumption carries its account's thresholds into its transaction, which records an event
 * for each one it crosses. With no endpoint wanting `fair_use.threshold`, a consumption carries none
 * and costs nothing more, unless thresholds are always wanted (the customer alerts' 80 and 100):
 * those are merged into every list here, once per read, never per consumption. Read from the store
 * every second (endpoints added on another server or by the CLI count from then on), and at once
 * after this server changed one.
 */
import type { WebhookEndpoint } from '../domain/webhooks.js';
import type { Store } from '../store/store.js';

export class WebhookInterest {
  private global: readonly number[] | undefined;
  private perAccount = new Map<string, readonly number[]>();
  private timer: NodeJS.Timeout | undefined;
  private failing = false;

  private readonly pollMs: number;
  private readonly always: readonly number[];

  constructor(
    private readonly store: Store,
    private readonly log: { warn(fields: object, message: string): void },
    options: {
      pollMs?: number;
      /** Thresholds recorded for every account whatever the endpoints want (the customer alerts'). */
      always?: readonly number[];
    } = {},
  ) {
    this.pollMs = options.pollMs ?? 1_000;
    this.always = [...new Set(options.always ?? [])].sort((a, b) => a - b);
    if (this.always.length > 0) this.global = this.always;
  }

  /** The thresholds (ascending) to record for this account's windows; undefined: none. */
  thresholdsFor(accountId: string): readonly number[] | undefined {
    return this.perAccount.get(accountId) ?? this.global;
  }

  /** Reads the endpoints now; then every pollMs until stop. */
  async start(): Promise<void> {
    await this.refresh();
    const tick = () => {
      this.timer = setTimeout(() => void this.refresh().finally(tick), this.pollMs);
      this.timer.unref();
    };
    tick();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  async refresh(): Promise<void> {
    try {
      this.load(await this.store.webhooks.listEndpoints());
      this.failing = false;
    } catch (err) {
      // What was known stays in use; logged once per outage.
      if (!this.failing)
        this.log.warn({ err: (err as Error).message }, 'webhook endpoints could not be read');
      this.failing = true;
    }
  }

  load(endpoints: readonly WebhookEndpoint[]): void {
    const wanting = endpoints.filter((e) => e.events.includes('fair_use.threshold'));
    const global = merge(
      wanting.filter((e) => e.accountId === null),
      this.always,
    );
    const perAccount = new Map<string, readonly number[]>();
    for (const e of wanting) {
      if (e.accountId === null || perAccount.has(e.accountId)) continue;
      perAccount.set(
        e.accountId,
        merge(
          wanting.filter((w) => w.accountId === null || w.accountId === e.accountId),
          this.always,
        ),
      );
    }
    this.global = global.length > 0 ? global : undefined;
    this.perAccount = perAccount;
  }
}

function merge(endpoints: readonly WebhookEndpoint[], always: readonly number[]): number[] {
  return [...new Set([...always, ...endpoints.flatMap((e) => e.thresholds)])].sort((a, b) => a - b);
}
