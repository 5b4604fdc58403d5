/**
 * @module Every tool this server serves, found by name: the registered tools (get_account) and the
 * catalogue's, each with its argument check, compiled once. Every call, through either door, finds
 * and admits its tool here (call.ts), so a tool is the same tool, with the same checks, answers and
 * errors, through HTTP and MCP.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { ApiError, argumentsMessage } from '../domain/api-error.js';
import type { TokenCost } from '../service/billing.js';
import type { ServedCatalogue } from './catalogue.js';
import type { Tool } from './tool.js';

/** A tool as listed to MCP clients: its name, description and input schema. */
export interface ToolListing {
  name: string;
  description: string;
  /** Always an object's schema: the catalogue refuses any other, and a registered tool's args are one. */
  inputSchema: { type: 'object'; [member: string]: unknown };
}

/** A tool ready to call: the tool, its argument check, and why it cannot be served here, if so. */
export interface Callable {
  tool: Tool;
  check(args: unknown): string | undefined;
  unavailable: string | undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A TypeBox schema as plain JSON Schema (its symbol-keyed members dropped). */
const plainSchema = (schema: unknown): ToolListing['inputSchema'] => JSON.parse(JSON.stringify(schema));

export class ToolRegistry {
  private readonly registered: Map<string, Callable & { listing: ToolListing }>;
  private listed: { revision: number; tools: ToolListing[] } | undefined;
  private costs: { revision: number; costs: Record<string, TokenCost> } | undefined;

  constructor(
    tools: readonly Tool[],
    private readonly catalogue: ServedCatalogue | undefined,
  ) {
    // The registered tools' arguments are checked by their routes' schemas over HTTP; these are the
    // same schemas, compiled once for callers that come another way (MCP).
    const ajv = new Ajv({ strict: false, allErrors: false });
    this.registered = new Map(
      tools.map((tool) => {
        const validate: ValidateFunction = ajv.compile(plainSchema(tool.args));
        const listing = {
          name: tool.name,
          description: tool.description,
          inputSchema: plainSchema(tool.args),
        };
        const check = (args: unknown) =>
          validate(args) ? undefined : argumentsMessage(validate.errors?.[0]);
        return [tool.name, { tool, check, unavailable: undefined, listing }];
      }),
    );
  }

  /** The tool of this name: a registered one first (catalogue names never take theirs), else the catalogue's. */
  find(name: string): Callable | undefined {
    return this.registered.get(name) ?? this.catalogue?.get(name);
  }

  /** Every tool, registered ones first, then the catalogue's by name; made once per catalogue revision. */
  list(): ToolListing[] {
    const revision = this.catalogue?.revision ?? -1;
    if (this.listed?.revision === revision) return this.listed.tools;
    const tools = [...this.registered.values()].map((r) => r.listing);
    for (const served of this.catalogue?.list() ?? []) {
      const d = served.definition;
      tools.push({
        name: d.name,
        description: d.description,
        inputSchema: d.input_schema as ToolListing['inputSchema'],
      });
    }
    this.listed = { revision, tools };
    return tools;
  }

  /**
   * Every tool's token cost, per call and per unit it counts, and that unit (get_billing); account
   * tools and free tools 0 and 0 per record. Made once per catalogue revision.
   */
  tokenCosts(): Record<string, TokenCost> {
    const revision = this.catalogue?.revision ?? -1;
    if (this.costs?.revision === revision) return this.costs.costs;
    const costs: Record<string, TokenCost> = {};
    for (const name of this.registered.keys()) costs[name] = { per_call: 0, per_record: 0, unit: 'records' };
    for (const served of this.catalogue?.list() ?? []) {
      const m = served.definition.metering;
      costs[served.definition.name] = {
        per_call: m?.tokens_per_call ?? 0,
        per_record: m?.tokens_per_record ?? 0,
        unit: m?.unit ?? 'records',
      };
    }
    this.costs = { revision, costs };
    return costs;
  }

  /**
   * The refusals every caller of a found tool gets before it runs: not served here (503), arguments
   * that are not an object or fail the tool's schema (400). Thrown as ApiError.
   */
  static admit(callable: Callable, args: unknown): void {
    if (callable.unavailable) throw new ApiError('unavailable', callable.unavailable);
    if (!isObject(args)) throw new ApiError('invalid_arguments', 'The arguments must be a JSON object.');
    const problem = callable.check(args);
    if (problem) throw new ApiError('invalid_arguments', problem);
  }
}
