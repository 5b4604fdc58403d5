/**
 * @module What a tool is: a name, its argument and answer schemas, and what it does for an
 * authenticated caller. An account tool answers by itself (get_account). A data tool does the
 * caller's work (a catalogue tool forwards it to its upstream), and the pipeline around it checks
 * the account's status and, when it is metered, fair use and tokens, and commits what it returned.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { TSchema } from 'typebox';
import type { Category } from '../domain/plans.js';
import type { BillingService, TokenCost } from '../service/billing.js';
import type { UsageService } from '../service/usage.js';
import type { Reads } from '../store/cached-reads.js';

/** What tools need of the services, made once per server: reads, metering, billing, the account view. */
export interface ToolDeps {
  reads: Reads;
  usage: UsageService;
  billing: BillingService;
  /** The `get_account` answer as JSON (Services.accountViewJson). */
  accountViewJson(accountId: string): string | undefined | Promise<string | undefined>;
  /** Every tool's token cost, per call and per unit it counts, and the unit (get_billing). */
  tokenCosts(): Record<string, TokenCost>;
}

/** Who calls, as the door authenticated them. */
export interface ToolContext {
  accountId: string;
  keyId: string;
  requestId: string;
  log: FastifyBaseLogger;
  deps: ToolDeps;
}

/** What a data tool's call came to, once committed: for the usage history. */
export interface Outcome {
  /** The amount counted, in `unit`. */
  records: number;
  tokens: number;
  missed: boolean;
  /** The metered tool's unit (records when absent): the history keeps each unit apart. */
  unit?: string;
}

interface ToolBase {
  /** snake_case; the path is /api/v1/tools/<name>. */
  name: string;
  summary: string;
  description: string;
  /** The JSON body: an object; members a tool does not declare are refused. */
  args: TSchema;
}

export interface AccountTool extends ToolBase {
  kind: 'account';
  /** The 200 answer: `{results, status, metadata}`. */
  response: TSchema;
  /** The answer, or a promise of it: a tool that can answer at once spares the request a promise. */
  run(ctx: ToolContext, args: unknown): unknown;
}

export interface Metering {
  category: Category;
  /** The unit the counted amount is in (`metering.unit`); records when absent. */
  unit?: string;
  /** Records the call may return, checked against fair use before the tool runs (default 0). */
  expectedRecords?(args: unknown): number;
  /** Tokens a hit costs once it returned `records` records (a miss costs none; unlimited accounts pay nothing). */
  tokenCost(args: unknown, records: number): number;
}

/** What a data tool found. */
export interface ToolAnswer {
  /** The `results` member of the answer. */
  results: unknown;
  /**
   * `results` already as JSON text (a catalogue tool's: as its upstream wrote it): the answer is then
   * written around it, and `results` is not serialised again.
   */
  resultsJson?: string;
  /**
   * Records returned, counted against fair use (a miss counts none). Anything but a safe
   * non-negative integer is the upstream's error: 502, nothing consumed or charged.
   */
  records: number;
  /** Nothing was found: the answer's status is `not_found`, and only the request is counted. */
  missed?: boolean;
  /** Members of the answer's `metadata` besides toolgate's own (which win a clash). */
  metadata?: Record<string, unknown>;
  /** The HTTP status of the answer: 200, or 404 for a miss its upstream answered so. */
  httpStatus?: number;
}

export interface DataTool extends ToolBase {
  kind: 'data';
  /** Fair use and tokens; null: free (still authenticated, rate limited, refused to suspended accounts). */
  metered: Metering | null;
  /** The `results` member of a hit's answer. */
  results: TSchema;
  run(ctx: ToolContext, args: unknown): Promise<ToolAnswer>;
}

export type Tool = AccountTool | DataTool;

/**
 * An answer already serialised to JSON (exactly what the response schema would produce): sent as is.
 * `value`, when given, is the same answer as a value, for a door that needs both (MCP).
 */
export class RawJson {
  constructor(
    readonly json: string,
    readonly value?: unknown,
  ) {}
}

/** An answer with another HTTP status than 200. */
export class WithStatus {
  constructor(
    readonly statusCode: number,
    readonly body: unknown,
  ) {}
}
