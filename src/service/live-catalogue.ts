/**
 * @module The catalogue as this server serves it: every tool of the stored catalogue built once per
 * revision (its input schema compiled, its headers resolved from this server's environment), and
 * kept up to date by polling the catalogue's revision, one small read, so that a change made by any
 * server or the CLI is served everywhere within a second, without a restart.
 */
import type { ToolDefinition } from '../domain/catalogue.js';
import type { CatalogueStore, Warn } from '../store/store.js';

export interface LiveCatalogueOptions<T> {
  catalogue: CatalogueStore;
  /** Builds what is served for a definition; called once per definition that changed. */
  build: (definition: ToolDefinition) => T;
  /** How often the revision is read, in milliseconds. */
  pollMs?: number;
  warn?: Warn;
}

export const DEFAULT_POLL_MS = 500;

export class LiveCatalogue<T> {
  private tools = new Map<string, { json: string; built: T }>();
  private current = -1;
  private timer: NodeJS.Timeout | undefined;
  private queue: Promise<void> = Promise.resolve();
  private loading = 0;
  private failing = false;

  constructor(private readonly opts: LiveCatalogueOptions<T>) {}

  /** The revision being served (-1 before the first load). */
  get revision(): number {
    return this.current;
  }

  get(name: string): T | undefined {
    return this.tools.get(name)?.built;
  }

  /** Every tool served, in name order. */
  list(): T[] {
    return [...this.tools.values()].map((t) => t.built);
  }

  /** Loads the catalogue, then keeps polling. A store that cannot be read now is retried by the poll. */
  async start(): Promise<void> {
    await this.refresh().catch(() => {});
    // A poll while a load is still on its way (a slow store) is skipped, not queued behind it.
    const poll = () => {
      if (this.loading === 0) void this.refresh().catch(() => {});
    };
    this.timer = setInterval(poll, this.opts.pollMs ?? DEFAULT_POLL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Reloads when the stored revision differs from the one served. Loads run one after the other,
   * each reading the revision afresh: a refresh asked for right after a write sees that write, even
   * while a poll that read the revision before it is still loading.
   */
  refresh(): Promise<void> {
    this.loading++;
    const run = this.queue.then(() => this.load()).finally(() => this.loading--);
    this.queue = run.catch(() => {});
    return run;
  }

  private async load(): Promise<void> {
    try {
      if ((await this.opts.catalogue.revision()) === this.current) return;
      const { revision, tools } = await this.opts.catalogue.list();
      const next = new Map<string, { json: string; built: T }>();
      for (const { definition } of tools) {
        const json = JSON.stringify(definition);
        const prior = this.tools.get(definition.name);
        next.set(
          definition.name,
          prior?.json === json ? prior : { json, built: this.opts.build(definition) },
        );
      }
      this.tools = next;
      this.current = revision;
      if (this.failing) this.opts.warn?.('tool catalogue read again', { revision });
      this.failing = false;
    } catch (err) {
      // Logged once per outage: the poll keeps serving the last catalogue it read.
      if (!this.failing) {
        this.opts.warn?.('tool catalogue could not be read; serving the last one read', {
          err: { message: (err as Error).message },
        });
      }
      this.failing = true;
      throw err;
    }
  }
}
