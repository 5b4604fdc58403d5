/**
 * @module What a tool is: a name, its argument and answer schemas, and what it does for an
 * authenticated caller. A plain tool answers by itself (get_account); a metered tool declares its
 * fair-use category and token cost, and the pipeline meters it.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { TSchema } from 'typebox';
import type { Category } from '../../domain/plans.js';
import type { Services } from '../../service/index.js';

export interface ToolContext {
  accountId: string;
  keyId: string;
  services: Services;
  log: FastifyBaseLogger;
}

interface ToolBase {
  /** snake_case; the path is /api/v1/tools/<name>. */
  name: string;
  summary: string;
  description: string;
  /** The JSON body: an object; members a tool does not declare are refused. */
  args: TSchema;
}

export interface PlainTool extends ToolBase {
  metered?: undefined;
  /** The 200 answer: `{results, status, metadata}`. */
  response: TSchema;
  /** The answer, or a promise of it: a tool that can answer at once spares the request a promise. */
  run(ctx: ToolContext, args: unknown): unknown;
}

export interface Metering {
  category: Category;
  /** Records the call may return, checked against fair use before the tool runs (default 0). */
  expectedRecords?(args: unknown): number;
  /** Tokens the call costs once it returned `records` records (unlimited accounts are never charged). */
  tokenCost(args: unknown, records: number): number;
}

export interface MeteredTool extends ToolBase {
  metered: Metering;
  /** The `results` member of the answer; the pipeline wraps it in the envelope. */
  results: TSchema;
  /** Does the work; `records` is what the call returned, counted against fair use. */
  run(ctx: ToolContext, args: unknown): Promise<{ results: unknown; records: number }>;
}

export type Tool = PlainTool | MeteredTool;

/** An answer already serialised to JSON (exactly what the response schema would produce): sent as is. */
export class RawJson {
  constructor(readonly json: string) {}
}
