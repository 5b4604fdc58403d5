/**
 * @module Connect, for the account's people and their agents: the MCP URL, what to paste into Claude
 * Code, Cursor and VS Code, the steps for claude.ai, Claude Desktop and ChatGPT, and each tool once,
 * with its input schema and an example call. The tools are read from the OpenAPI document
 * /openapi.json serves (catalogue tools included), and only its tools: the server's probes and the
 * operator's admin API are not the customers'.
 */

import type { FastifyInstance } from 'fastify';
import { brandSlug, DEFAULT_BRAND } from '../../domain/brand.js';
import { mcpServerName, snippets } from '../connect-snippets.js';
import { accountPage, type ConsolePageDeps } from '../context.js';

const TOOL_PATH = '/api/v1/tools/';

export interface ToolEntry {
  name: string;
  summary: string;
  /** The description's paragraphs, the summary left out where it repeats it. */
  paragraphs: string[];
  /** The input schema, pretty-printed JSON. */
  schema: string;
  /** A curl call with example arguments. */
  example: string;
}

type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
};

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  examples?: unknown[];
  example?: unknown;
  format?: string;
  minimum?: number;
  maximum?: number;
};

/** A value the schema shows or implies, or undefined when it names none (and a placeholder is made). */
function known(schema: Schema): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  return undefined;
}

const FORMATS: Record<string, string> = {
  email: 'name@example.com',
  uri: 'https://example.com',
  date: '2026-01-01',
  'date-time': '2026-01-01T00:00:00Z',
};

function exampleValue(name: string, schema: Schema, depth: number): unknown {
  const given = known(schema);
  if (given !== undefined) return given;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'integer':
    case 'number': {
      const low = schema.minimum ?? 1;
      return schema.maximum !== undefined && schema.maximum < low ? schema.maximum : low;
    }
    case 'boolean':
      return true;
    case 'array':
      return schema.items && depth < 4 ? [exampleValue(name, schema.items, depth + 1)] : [];
    case 'object':
      return depth < 4 ? exampleArguments(schema, depth + 1) : {};
    default:
      return (schema.format && FORMATS[schema.format]) ?? `<${name}>`;
  }
}

/**
 * Example arguments for an input schema: every required property, and the optional ones whose
 * schema names a value (an enum, a default, an example); a placeholder `<name>` for a string the
 * schema says nothing more of.
 */
export function exampleArguments(schema: unknown, depth = 0): Record<string, unknown> {
  const s = (schema ?? {}) as Schema;
  const required = new Set(s.required ?? []);
  const args: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(s.properties ?? {})) {
    if (required.has(name)) args[name] = exampleValue(name, property, depth);
    else if (known(property) !== undefined) args[name] = known(property);
  }
  return args;
}

/** `value` in single quotes for a POSIX shell. */
const shellQuoted = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

export function exampleCall(base: string, tool: string, args: Record<string, unknown>): string {
  return [
    `curl -s -X POST ${base}${TOOL_PATH}${tool} \\`,
    `  -H 'Authorization: Bearer <your API key>' \\`,
    `  -H 'Content-Type: application/json' -d ${shellQuoted(JSON.stringify(args))}`,
  ].join('\n');
}

/**
 * The summary and the description's paragraphs, nothing said twice: a catalogue tool's summary is
 * its description's first line (cut at 120 characters), which the description then repeats.
 */
export function toolText(summary: string, description: string): { summary: string; paragraphs: string[] } {
  const paragraphs = description
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const first = paragraphs[0];
  if (summary === '' || first === undefined || !first.startsWith(summary)) return { summary, paragraphs };
  const rest = first.slice(summary.length);
  // The summary is the whole first line: the paragraph goes on after it.
  if (rest === '' || rest.startsWith('\n'))
    return {
      summary,
      paragraphs: rest.trim() === '' ? paragraphs.slice(1) : [rest.trim(), ...paragraphs.slice(1)],
    };
  // The summary was cut: the paragraph says it all.
  return { summary: '', paragraphs };
}

/** The tools of the document, each once, by name. */
export function toolsOf(document: Record<string, unknown>, base: string): ToolEntry[] {
  const paths = (document.paths ?? {}) as Record<string, { post?: Operation } | undefined>;
  const tools: ToolEntry[] = [];
  for (const path of Object.keys(paths).sort()) {
    const op = paths[path]?.post;
    if (!path.startsWith(TOOL_PATH) || !op) continue;
    const name = path.slice(TOOL_PATH.length);
    const schema = op.requestBody?.content?.['application/json']?.schema ?? { type: 'object' };
    tools.push({
      name,
      ...toolText(op.summary ?? '', op.description ?? ''),
      schema: JSON.stringify(schema, null, 2),
      example: exampleCall(base, name, exampleArguments(schema)),
    });
  }
  return tools;
}

export async function connectPage(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  accountPage(app, deps, { path: 'connect', current: 'Connect', template: 'connect' }, () => {
    const base = deps.service.publicUrl();
    const mcpUrl = `${base}/mcp`;
    // The server's entry in the customer's client config: the brand's name, else the public host's.
    const entry = deps.brand.name === DEFAULT_BRAND.name ? mcpServerName(base) : brandSlug(deps.brand.name);
    return {
      base,
      mcpUrl,
      https: base.startsWith('https://'),
      ...snippets(mcpUrl, entry),
      tools: toolsOf(deps.openapi(), base),
    };
  });
}
