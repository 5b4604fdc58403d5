/**
 * @module The two engines behind `POST /mcp`, each loaded with the first message it must answer:
 * the fast path (fast-path.ts) with the first MCP request, the MCP SDK (sdk-engine.ts) with the
 * first message the fast path leaves to it. A server whose callers never use MCP holds neither; one
 * whose callers only make hot calls does not hold the SDK (some 20-25 MiB of memory, and
 * old-generation heap its collector would mark again and again).
 */
import type { ToolCalls } from '../tools/call.js';
import type { FastPath } from './fast-path.js';
import type { ServerInfo } from './results.js';
import type { McpEngine } from './sdk-engine.js';

export class McpEngines {
  /** The fast path once loaded: read as is on the hot path, without a promise. */
  fast: FastPath | undefined;
  private engine: Promise<McpEngine> | undefined;

  constructor(
    private readonly calls: ToolCalls,
    private readonly onerror: (err: Error) => void,
    private readonly serverInfo: ServerInfo,
  ) {}

  async loadFast(): Promise<FastPath> {
    this.fast ??= new (await import('./fast-path.js')).FastPath(this.calls, this.serverInfo);
    return this.fast;
  }

  /** The SDK's engine; one that failed to load is tried again by the next MCP request. */
  sdk(): Promise<McpEngine> {
    this.engine ??= import('./sdk-engine.js').then(
      (m) => m.createMcpEngine({ calls: this.calls, onerror: this.onerror, serverInfo: this.serverInfo }),
      (err) => {
        // Tried again by the next MCP request rather than kept as this one's failure.
        this.engine = undefined;
        throw err;
      },
    );
    return this.engine;
  }

  async close(): Promise<void> {
    // An engine that failed to load has nothing to close (its request was answered with the failure).
    if (this.engine)
      await this.engine.then(
        (e) => e.close(),
        () => undefined,
      );
  }
}
