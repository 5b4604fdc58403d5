/**
 * @module One tool call, whichever door it came through (HTTP or MCP): the tool found by name,
 * admitted (the door's rate-limit refusal, availability, arguments), run through the pipeline, and
 * its answer or refusal returned as a value. The usage counters, failure counts and metrics of
 * every tool call are kept here, so the doors only translate.
 */
import type { FastifyBaseLogger } from 'fastify';
import { ApiError, asApiError } from '../domain/api-error.js';
import { ERROR_STATUS } from '../domain/errors.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Services } from '../service/index.js';
import type { UsageCounters } from '../service/usage-counters.js';
import { type Ran, runTool } from './pipeline.js';
import { ToolRegistry } from './registry.js';
import { RawJson, type ToolContext, type ToolDeps, WithStatus } from './tool.js';

export type Door = 'http' | 'mcp';

/** The name a call is counted under in the usage history: a tool this server has, or `(unknown)`. */
export const UNKNOWN_TOOL = '(unknown)';

/** Who calls, as the door authenticated them. */
export interface Caller {
  accountId: string;
  keyId: string;
  requestId: string;
  log: FastifyBaseLogger;
  /** performance.now() when the request arrived, for the latency metric (0 without metrics). */
  startedAt: number;
  /** The door's rate-limit refusal: the call answers it first, so nothing is learnt, not even whether the tool exists. */
  refusal: ApiError | null;
}

/** A tool call's answer, with the HTTP status it has (MCP reports it in its metrics too). */
export type Called =
  | {
      ok: true;
      status: number;
      /** The answer as a value; undefined when the tool made only its JSON (get_account). */
      body: unknown;
      /** The answer as JSON, when the tool made it so already: not made again. */
      json: string | undefined;
    }
  | { ok: false; status: number; error: ApiError };

/** What the one tool call uses of the services, and nothing more (the Services object answers it). */
export type ToolServices = Pick<
  Services,
  'reads' | 'usage' | 'billing' | 'accountViewJson' | 'usageCounters' | 'metrics'
>;

export class ToolCalls {
  private readonly deps: ToolDeps;
  private readonly counters: UsageCounters | undefined;
  private readonly metrics: Metrics | undefined;

  constructor(
    readonly registry: ToolRegistry,
    services: ToolServices,
  ) {
    this.counters = services.usageCounters;
    this.metrics = services.metrics;
    this.deps = {
      reads: services.reads,
      usage: services.usage,
      billing: services.billing,
      accountViewJson: (accountId) => services.accountViewJson(accountId),
      tokenCosts: () => registry.tokenCosts(),
    };
  }

  /** Calls the tool `name` for `caller`: at once when the tool answers at once, else through one promise. */
  call(door: Door, caller: Caller, name: string, args: unknown): Called | Promise<Called> {
    const callable = this.registry.find(name);
    if (caller.refusal) return this.failed(door, caller, name, caller.refusal);
    if (!callable) {
      const error = new ApiError('unknown_tool', `There is no tool "${name.slice(0, 64)}".`);
      return this.failed(door, caller, name, error);
    }
    let ran: Ran | Promise<Ran>;
    try {
      ToolRegistry.admit(callable, args);
      const ctx: ToolContext = {
        accountId: caller.accountId,
        keyId: caller.keyId,
        requestId: caller.requestId,
        log: caller.log,
        deps: this.deps,
      };
      ran = runTool(callable.tool, ctx, args);
    } catch (err) {
      return this.failed(door, caller, name, asApiError(err, caller.log, this.metrics));
    }
    if (!(ran instanceof Promise)) return this.answered(door, caller, name, ran);
    return ran.then(
      (r) => this.answered(door, caller, name, r),
      (err) => this.failed(door, caller, name, asApiError(err, caller.log, this.metrics)),
    );
  }

  /**
   * A call the door refused before it could be made (no valid key, a body that is not JSON, a
   * media type it does not take): its metric, and a failure of the caller when it is known.
   */
  refusedAtDoor(
    door: Door,
    name: string,
    status: number,
    caller?: Pick<Caller, 'accountId' | 'keyId' | 'startedAt'>,
  ): void {
    const known = this.registry.find(name) !== undefined;
    if (caller)
      this.counters?.count(caller.accountId, caller.keyId, known ? name : UNKNOWN_TOOL, door, FAILED);
    this.measure(door, known ? name : 'unknown', status, caller?.startedAt ?? 0);
  }

  private answered(door: Door, caller: Caller, name: string, ran: Ran): Called {
    let { out } = ran;
    let status = 200;
    if (out instanceof WithStatus) {
      status = out.statusCode;
      out = out.body;
    }
    this.counters?.answered(caller.accountId, caller.keyId, name, door, ran.outcome);
    this.measure(door, name, status, caller.startedAt);
    return out instanceof RawJson
      ? { ok: true, status, body: out.value, json: out.json }
      : { ok: true, status, body: out, json: undefined };
  }

  private failed(door: Door, caller: Caller, name: string, error: ApiError): Called {
    const known = this.registry.find(name) !== undefined;
    const status = ERROR_STATUS[error.code];
    this.counters?.count(caller.accountId, caller.keyId, known ? name : UNKNOWN_TOOL, door, FAILED);
    this.measure(door, known ? name : 'unknown', status, caller.startedAt);
    return { ok: false, status, error };
  }

  private measure(door: Door, tool: string, status: number, startedAt: number): void {
    this.metrics?.request(tool, door, status, startedAt === 0 ? 0 : (performance.now() - startedAt) / 1000);
  }
}

const FAILED = { kind: 'failed' } as const;
