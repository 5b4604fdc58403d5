/**
 * @module A catalogue tool as a data tool: its arguments checked against its input schema (compiled
 * once per catalogue revision), the call forwarded to its upstream (upstream/forward.ts), and the
 * upstream's answer read as a hit, a miss or an error. The pipeline (pipeline.ts) does the rest, as
 * for every data tool.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ApiError, argumentsMessage } from '../domain/api-error.js';
import { type HeaderProblem, resolveHeaders, type ToolDefinition, tokenCost } from '../domain/catalogue.js';
import { compilePointer, countRecords, expectedRecords } from '../domain/json-pointer.js';
import type { Upstreams, UpstreamTarget } from '../upstream/forward.js';
import type { DataTool, ToolAnswer } from './tool.js';

const addFormats = addFormatsModule.default;

export interface ServedTool {
  definition: ToolDefinition;
  tool: DataTool;
  /** The first problem with these arguments, as the 400's message; undefined when they are fine. */
  check(args: unknown): string | undefined;
  /** Why this server cannot serve the tool (503), or undefined. */
  unavailable: string | undefined;
}

export interface CatalogueToolDeps {
  upstreams: Upstreams;
  /** Where `${NAME}` in upstream headers is looked up: this server's environment. */
  env: Readonly<Record<string, string | undefined>>;
  /** The only variables of `env` a tool may read (TOOLGATE_UPSTREAM_ENV less toolgate's own). */
  allowed: ReadonlySet<string>;
  /** Told, once per definition built, that a tool cannot be served here and why. */
  warn?: (message: string, fields: Record<string, unknown>) => void;
}

/** The warning for each reason a tool's headers cannot be sent, and the field naming what (never a value). */
const UNSENDABLE: Record<HeaderProblem['reason'], [message: string, field: string]> = {
  not_allowed: [
    'catalogue tool unavailable: its headers name variables TOOLGATE_UPSTREAM_ENV does not allow',
    'not_allowed',
  ],
  headers: ['catalogue tool unavailable: header names or values HTTP cannot carry', 'headers'],
  missing: ['catalogue tool unavailable: environment variables missing', 'missing'],
  not_ascii: [
    'catalogue tool unavailable: environment variables hold characters a header cannot carry (only visible ASCII and spaces)',
    'not_ascii',
  ],
};

export function buildServedTool(definition: ToolDefinition, deps: CatalogueToolDeps): ServedTool {
  const validate = compile(definition.input_schema);
  const headers = resolveHeaders(definition, deps.env, deps.allowed);
  let unavailable: string | undefined;
  if (!headers.ok) {
    unavailable = `The tool "${definition.name}" is not available on this server.`;
    const [message, field] = UNSENDABLE[headers.reason];
    deps.warn?.(message, { tool: definition.name, [field]: headers.names });
  }
  const target: UpstreamTarget = {
    url: definition.upstream.url,
    timeoutMs: definition.upstream.timeout_ms,
    maxResponseBytes: definition.upstream.max_response_bytes,
    headers: headers.ok ? headers.headers : {},
  };
  const m = definition.metering;
  // Decoded once per definition, not per answer.
  const recordsAt = m ? compilePointer(m.records_pointer) : undefined;
  const expectedAt = m?.expected_records_pointer ? compilePointer(m.expected_records_pointer) : undefined;
  const tool: DataTool = {
    kind: 'data',
    name: definition.name,
    summary: definition.description.split('\n')[0]?.slice(0, 120) ?? definition.name,
    description: definition.description,
    args: definition.input_schema,
    results: {},
    metered: m && {
      category: m.category,
      unit: m.unit ?? 'records',
      expectedRecords: (args) => (expectedAt ? expectedRecords(args, expectedAt) : 0),
      tokenCost: (_args, records) => tokenCost(m, records),
    },
    async run(ctx, args): Promise<ToolAnswer> {
      const result = await deps.upstreams.forward(target, {
        body: JSON.stringify(args),
        requestId: ctx.requestId,
        accountId: ctx.accountId,
        keyId: ctx.keyId,
        tool: definition.name,
      });
      switch (result.kind) {
        case 'answer': {
          const answer: ToolAnswer = {
            results: result.results,
            records: recordsAt && result.status === 'ok' ? countRecords(result.body, recordsAt) : 0,
          };
          if (result.resultsJson !== undefined) answer.resultsJson = result.resultsJson;
          if (result.status === 'not_found') answer.missed = true;
          if (result.metadata) answer.metadata = result.metadata;
          if (result.httpStatus === 404) answer.httpStatus = 404;
          return answer;
        }
        case 'rejected':
          throw new ApiError('invalid_arguments', result.message);
        case 'error':
          ctx.log.warn({ tool: definition.name, reason: result.reason }, 'upstream call failed');
          throw new ApiError(result.code);
      }
    },
  };
  return {
    definition,
    tool,
    unavailable,
    check: (args) => (validate(args) ? undefined : argumentsMessage(validate.errors?.[0])),
  };
}

/**
 * Each revision's validators come from their own Ajv, so a removed tool's compiled schema goes with
 * it; the options are the ones the catalogue was checked with (domain/catalogue.ts).
 */
function compile(schema: Record<string, unknown>): ValidateFunction {
  const ajv = new Ajv({ allErrors: false, strict: true });
  addFormats(ajv);
  return ajv.compile(schema);
}
