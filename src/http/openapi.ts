/**
 * @module The OpenAPI document as served: the one generated from the route schemas, with a path for
 * each catalogue tool (which has no route of its own: one route serves them all, so that tools come
 * and go without a restart). Made once per catalogue revision.
 */

import { unitSingular } from '../domain/plans.js';
import type { ServedCatalogue } from '../tools/catalogue.js';
import type { ServedTool } from '../tools/catalogue-tool.js';
import { FairUseMetadataSchema } from '../tools/schemas.js';

type Doc = { paths?: Record<string, unknown>; components?: { schemas?: Record<string, unknown> } } & Record<
  string,
  unknown
>;

// ErrorBodySchema's $id, the component's name (app.ts names shared schemas by $id).
const ERROR_BODY_REF = { $ref: '#/components/schemas/ErrorBody' };

/**
 * The paths with every inline copy of a component schema (the error body, in each operation's 4XX
 * and 5XX: the generator inlines it) replaced by a reference to it: a document a fifth the size,
 * whose component is used.
 */
function referenceComponents(doc: Doc): Record<string, unknown> {
  const refs = new Map(
    Object.entries(doc.components?.schemas ?? {}).map(([name, schema]) => [
      JSON.stringify(schema),
      { $ref: `#/components/schemas/${name}` },
    ]),
  );
  const walk = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map(walk);
    const ref = refs.get(JSON.stringify(value));
    if (ref) return ref;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
  };
  return walk(doc.paths ?? {}) as Record<string, unknown>;
}

const json = (schema: unknown, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

function toolPath(served: ServedTool) {
  const { definition: d } = served;
  const tokens = { tokens_charged: { type: 'integer' }, tokens_remaining: { type: 'integer' } };
  const envelope = {
    type: 'object',
    required: ['results', 'status', 'metadata'],
    properties: {
      results: {},
      status: { type: 'string', enum: ['ok', 'not_found'] },
      metadata: {
        type: 'object',
        properties: d.metering ? { fair_use: FairUseMetadataSchema, ...tokens } : tokens,
      },
    },
  };
  const metering = d.metering
    ? `Metered: ${d.metering.category}; ${d.metering.tokens_per_call} tokens per call, ` +
      `${d.metering.tokens_per_record} per ${unitSingular(d.metering.unit ?? 'records')}.`
    : 'Free: consumes no fair use and no tokens.';
  return {
    post: {
      operationId: d.name,
      summary: served.tool.summary,
      description: `${d.description}\n\n${metering}`.trim(),
      tags: ['tools'],
      security: [{ bearerAuth: [] }],
      requestBody: { required: false, ...json(d.input_schema, 'The arguments') },
      responses: {
        '200': json(envelope, 'A hit (status ok) or a miss (status not_found)'),
        '404': json(envelope, 'A miss the upstream answered with 404'),
        '4XX': json(ERROR_BODY_REF, 'A refusal'),
        '5XX': json(ERROR_BODY_REF, 'A failure: 502 upstream_error, 503 unavailable, 504 upstream_timeout'),
      },
    },
  };
}

export class OpenApiDocument {
  private cached: { revision: number; doc: Doc } | undefined;

  constructor(
    private readonly generated: () => Doc,
    private readonly catalogue: ServedCatalogue | undefined,
  ) {}

  current(): Doc {
    const revision = this.catalogue?.revision ?? -1;
    if (this.cached?.revision === revision) return this.cached.doc;
    const base = this.generated();
    const paths = referenceComponents(base);
    for (const served of this.catalogue?.list() ?? []) {
      paths[`/api/v1/tools/${served.definition.name}`] = toolPath(served);
    }
    const doc = { ...base, paths };
    this.cached = { revision, doc };
    return doc;
  }
}
