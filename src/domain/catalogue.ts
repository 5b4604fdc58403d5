/**
 * @module Catalogue tools: operator-declared tools forwarded to their own HTTP service. Parses and
 * validates a catalogue (refused whole, every problem listed), resolves header placeholders from the
 * variables the operator allowed (TOOLGATE_UPSTREAM_ENV) and reads the records an answer holds for
 * metering.
 */
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { MAX_TOKENS } from './ledger.js';
import { type Category, isCategory } from './plans.js';
import { isStorable, UNSTORABLE_REASON } from './storable.js';
import {
  allowedVariables,
  type HeaderProblem,
  headerNameProblem,
  headerValueProblems,
  resolveHeaderValues,
  headerVariables as variablesIn,
} from './upstream-headers.js';

export { allowedVariables, type HeaderProblem, isOwnVariable } from './upstream-headers.js';

import { isPointer } from './json-pointer.js';

export const ACCOUNT_TOOLS = ['get_account', 'get_billing', 'get_usage'] as const;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const MAX_TIMEOUT_MS = 600_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
export const MAX_RESPONSE_BYTES_LIMIT = 100 * 1024 * 1024;
const MAX_TOOLS = 500;
const MAX_DESCRIPTION = 4000;

export interface ToolMetering {
  category: Category;
  /**
   * The unit of the counted amount (records_pointer's count): `records` when absent, or a unit the
   * operator names (`pages`); the plan's limits of that unit in the category meter it.
   */
  unit?: string;
  records_pointer: string;
  expected_records_pointer: string | null;
  tokens_per_call: number;
  tokens_per_record: number;
}

/** A catalogue tool as stored and shown: every default applied (the wire form, snake_case). */
export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  upstream: { url: string; timeout_ms: number; max_response_bytes: number; headers: Record<string, string> };
  /** null: a free tool, not metered. */
  metering: ToolMetering | null;
}

/** `path` is a JSON Pointer into the input ("" for the whole input). */
export interface Problem {
  path: string;
  reason: string;
}

// Under NodeNext the CommonJS default export arrives as the module object; `.default` is the plugin
// both for the type checker and at run time.
const addFormats = addFormatsModule.default;
// Only used to prove a schema compiles; each schema is removed again so the instance neither grows
// nor lets one tool's `$id` clash with (or be referenced by) another's.
const ajv = new Ajv({ allErrors: false, strict: true });
addFormats(ajv);

const NAME = /^[a-z][a-z0-9_]{0,63}$/;
const TOOL_MEMBERS = ['name', 'description', 'input_schema', 'upstream', 'metering'];
const UPSTREAM_MEMBERS = ['url', 'timeout_ms', 'max_response_bytes', 'headers'];
const METERING_MEMBERS =
  'category unit records_pointer expected_records_pointer tokens_per_call tokens_per_record'.split(' ');

type Obj = Record<string, unknown>;

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function child(path: string, key: string | number): string {
  return `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

/** Collects every problem rather than stopping at the first: a catalogue is refused with all of them listed. */
class Checker {
  readonly problems: Problem[] = [];

  constructor(private readonly allowed: ReadonlySet<string>) {}

  add(path: string, reason: string): void {
    this.problems.push({ path, reason });
  }

  unknownMembers(obj: Obj, allowed: readonly string[], path: string): void {
    for (const key of Object.keys(obj))
      if (!allowed.includes(key)) this.add(child(path, key), 'unknown member');
  }

  integer(obj: Obj, key: string, path: string, min: number, max: number, fallback: number): number {
    const value = obj[key];
    if (value === undefined) return fallback;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max)
      return value;
    this.add(child(path, key), `must be an integer from ${min} to ${max}`);
    return fallback;
  }

  pointer(obj: Obj, key: string, path: string, fallback: string | null): string | null {
    const value = obj[key];
    if (value === undefined || (value === null && fallback === null)) return fallback;
    if (typeof value === 'string' && !isStorable(value)) {
      // The metering goes into the audit trail's JSON, where PostgreSQL refuses such strings.
      this.add(child(path, key), UNSTORABLE_REASON);
      return fallback;
    }
    if (typeof value === 'string' && isPointer(value)) return value;
    this.add(
      child(path, key),
      typeof value === 'string'
        ? 'must be a JSON Pointer: "" or starting with "/", with "~" only as "~0" or "~1"'
        : `must be a string (a JSON Pointer)${fallback === null ? ' or null' : ''}`,
    );
    return fallback;
  }

  name(value: unknown, path: string): string {
    if (typeof value !== 'string') this.add(path, value === undefined ? 'is required' : 'must be a string');
    else if (!NAME.test(value))
      this.add(path, 'must be snake_case: 1-64 characters of a-z, 0-9 and "_", starting with a letter');
    else if ((ACCOUNT_TOOLS as readonly string[]).includes(value))
      this.add(path, 'is reserved for an account tool');
    return typeof value === 'string' ? value : '';
  }

  inputSchema(value: unknown, path: string): Record<string, unknown> {
    if (value === undefined) return { type: 'object' };
    if (!isObject(value)) {
      this.add(path, 'must be an object (a JSON Schema)');
      return {};
    }
    const schema: Obj = { type: 'object', ...structuredClone(value) };
    const id = typeof value.$id === 'string' ? value.$id.replace(/#\/?$/, '') : undefined;
    if (value.type !== 'object' && value.type !== undefined)
      this.add(child(path, 'type'), 'must be "object": tool arguments are a JSON object');
    else if (value.$async !== undefined)
      // An async validator returns a promise, which would pass every call.
      this.add(child(path, '$async'), 'async schemas are not supported');
    else if (id !== undefined && (ajv.schemas[id] ?? ajv.refs[id]) !== undefined)
      // Compiling it would fail, and removing it afterwards would drop the meta-schema it names.
      this.add(child(path, '$id'), 'names a schema toolgate already knows (a JSON Schema meta-schema)');
    else {
      try {
        ajv.compile(schema);
      } catch (error) {
        this.add(path, `does not compile: ${(error as Error).message}`);
      } finally {
        ajv.removeSchema(schema);
      }
    }
    return schema;
  }

  url(value: unknown, path: string): string {
    if (typeof value !== 'string') {
      this.add(path, value === undefined ? 'is required' : 'must be a string');
      return '';
    }
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      this.add(path, 'must be an absolute URL');
      return value;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      this.add(path, 'must be an http: or https: URL');
    if (url.username !== '' || url.password !== '')
      this.add(path, 'must not hold a user name or password: put credentials in upstream.headers');
    // `url.hash` is "" for a bare trailing "#", which still is a fragment.
    if (value.includes('#')) this.add(path, 'must not have a fragment ("#...")');
    return value;
  }

  headers(value: unknown, path: string): Record<string, string> {
    if (value === undefined) return {};
    if (!isObject(value)) {
      this.add(path, 'must be an object of header names to string values');
      return {};
    }
    const headers: Record<string, string> = {};
    const seen = new Set<string>();
    for (const [name, raw] of Object.entries(value)) {
      const at = child(path, name);
      const lower = name.toLowerCase();
      const nameProblem = headerNameProblem(name);
      if (nameProblem) this.add(at, nameProblem);
      else if (seen.has(lower)) this.add(at, 'repeats another header (names are case-insensitive)');
      seen.add(lower);
      if (typeof raw !== 'string') {
        this.add(at, 'must be a string');
        continue;
      }
      for (const problem of headerValueProblems(raw, this.allowed)) this.add(at, problem);
      headers[name] = raw;
    }
    return headers;
  }

  upstream(value: unknown, path: string): ToolDefinition['upstream'] {
    if (!isObject(value)) {
      this.add(path, value === undefined ? 'is required' : 'must be an object');
      return { url: '', timeout_ms: 0, max_response_bytes: 0, headers: {} };
    }
    this.unknownMembers(value, UPSTREAM_MEMBERS, path);
    return {
      url: this.url(value.url, child(path, 'url')),
      timeout_ms: this.integer(value, 'timeout_ms', path, 1, MAX_TIMEOUT_MS, DEFAULT_TIMEOUT_MS),
      max_response_bytes: this.integer(
        value,
        'max_response_bytes',
        path,
        1,
        MAX_RESPONSE_BYTES_LIMIT,
        DEFAULT_MAX_RESPONSE_BYTES,
      ),
      headers: this.headers(value.headers, child(path, 'headers')),
    };
  }

  metering(value: unknown, path: string): ToolMetering | null {
    if (value === undefined || value === null) return null;
    if (!isObject(value)) {
      this.add(path, 'must be an object or null');
      return null;
    }
    this.unknownMembers(value, METERING_MEMBERS, path);
    const category = value.category;
    const known = typeof category === 'string' && isCategory(category);
    const categoryProblem =
      category === undefined
        ? 'is required'
        : 'must be a category name: [a-z][a-z0-9_]{0,31}, such as enrich';
    if (!known) this.add(child(path, 'category'), categoryProblem);
    const unit = value.unit;
    const goodUnit =
      unit === undefined || (typeof unit === 'string' && isCategory(unit) && unit !== 'requests');
    if (!goodUnit)
      this.add(
        child(path, 'unit'),
        'must be a unit name: [a-z][a-z0-9_]{0,31}, such as records or pages (not requests: every call is one)',
      );
    return {
      category: known ? category : 'enrich',
      ...(goodUnit && typeof unit === 'string' ? { unit } : {}),
      records_pointer: this.pointer(value, 'records_pointer', path, '/results') ?? '/results',
      expected_records_pointer: this.pointer(value, 'expected_records_pointer', path, null),
      tokens_per_call: this.integer(value, 'tokens_per_call', path, 0, MAX_TOKENS, 0),
      tokens_per_record: this.integer(value, 'tokens_per_record', path, 0, MAX_TOKENS, 0),
    };
  }

  /** `fixedName`: the name from the admin API's URL, which the body may repeat but not contradict. */
  tool(value: unknown, path: string, fixedName?: string): ToolDefinition | undefined {
    if (!isObject(value)) {
      this.add(path, 'must be an object');
      return undefined;
    }
    this.unknownMembers(value, TOOL_MEMBERS, path);
    let name: string;
    if (fixedName === undefined) name = this.name(value.name, child(path, 'name'));
    else {
      name = this.name(fixedName, child(path, 'name'));
      if (value.name !== undefined && value.name !== fixedName)
        this.add(child(path, 'name'), `must equal the tool name in the URL ("${fixedName}")`);
    }
    const description = value.description ?? '';
    if (typeof description !== 'string') this.add(child(path, 'description'), 'must be a string');
    else if (description.length > MAX_DESCRIPTION)
      this.add(child(path, 'description'), `must be at most ${MAX_DESCRIPTION} characters`);
    return {
      name,
      description: typeof description === 'string' ? description : '',
      input_schema: this.inputSchema(value.input_schema, child(path, 'input_schema')),
      upstream: this.upstream(value.upstream, child(path, 'upstream')),
      metering: this.metering(value.metering, child(path, 'metering')),
    };
  }
}

/** `upstreamEnv`: TOOLGATE_UPSTREAM_ENV, the only variables its headers' `${NAME}` may name. */
export function parseCatalogue(
  input: unknown,
  upstreamEnv: readonly string[] = [],
): { ok: true; tools: ToolDefinition[] } | { ok: false; problems: Problem[] } {
  const check = new Checker(allowedVariables(upstreamEnv));
  if (!isObject(input))
    return { ok: false, problems: [{ path: '', reason: 'must be an object with a "tools" array' }] };
  check.unknownMembers(input, ['tools'], '');
  const list = input.tools;
  if (!Array.isArray(list) || list.length < 1 || list.length > MAX_TOOLS) {
    check.add('/tools', list === undefined ? 'is required' : `must be an array of 1 to ${MAX_TOOLS} tools`);
    if (!Array.isArray(list)) return { ok: false, problems: check.problems };
  }
  const tools: ToolDefinition[] = [];
  const firstAt = new Map<string, number>();
  list.forEach((entry, index) => {
    const tool = check.tool(entry, child('/tools', index));
    if (!tool) return;
    tools.push(tool);
    const first = firstAt.get(tool.name);
    if (first !== undefined && NAME.test(tool.name))
      check.add(child(child('/tools', index), 'name'), `duplicate name (also at /tools/${first})`);
    else if (first === undefined) firstAt.set(tool.name, index);
  });
  return check.problems.length > 0 ? { ok: false, problems: check.problems } : { ok: true, tools };
}

/**
 * One tool (the admin API's PUT /admin/v1/tools/{name} body); `name` in the body, when present, must
 * equal `name`. Paths are relative to the tool ("/upstream/url").
 */
export function parseTool(
  name: string,
  input: unknown,
  upstreamEnv: readonly string[] = [],
): { ok: true; tool: ToolDefinition } | { ok: false; problems: Problem[] } {
  const check = new Checker(allowedVariables(upstreamEnv));
  const tool = check.tool(input, '', name);
  return tool && check.problems.length === 0 ? { ok: true, tool } : { ok: false, problems: check.problems };
}

/** The `${NAME}` placeholders in a tool's header values. */
export function headerVariables(tool: ToolDefinition): string[] {
  return variablesIn(tool.upstream.headers);
}

/** A tool's headers with every ${NAME} replaced from `env`, reading only `allowed` variables (see resolveHeaderValues). */
export function resolveHeaders(
  tool: ToolDefinition,
  env: Readonly<Record<string, string | undefined>>,
  allowed: ReadonlySet<string>,
): { ok: true; headers: Record<string, string> } | ({ ok: false } & HeaderProblem) {
  return resolveHeaderValues(tool.upstream.headers, env, allowed);
}

/** Token cost of a hit returning `records` records. */
export function tokenCost(m: ToolMetering, records: number): number {
  return m.tokens_per_call + m.tokens_per_record * records;
}
