/**
 * @module The metered-tool pipeline. After authentication: account status (403), then fair use
 * (429), then tokens (402), all checked read-only before the tool runs; then the tool; then one
 * atomic commit of what it actually returned. A refused or failed call spends nothing.
 */
import Type from 'typebox';
import { fairUseMetadata } from '../../domain/fair-use.js';
import { unwrap } from '../auth.js';
import { ApiError } from '../errors.js';
import { FairUseMetadataSchema } from '../schemas.js';
import type { MeteredTool, Tool, ToolContext } from './tool.js';

export function responseSchema(tool: Tool) {
  if (!tool.metered) return tool.response;
  return Type.Object({
    results: tool.results,
    status: Type.Literal('ok'),
    metadata: Type.Object({ fair_use: FairUseMetadataSchema }),
  });
}

/** The tool's answer: at once when the tool has it at once (get_account from the read cache), else a promise. */
export function runTool(tool: Tool, ctx: ToolContext, args: unknown): unknown {
  return tool.metered ? runMetered(tool, ctx, args) : tool.run(ctx, args);
}

async function runMetered(tool: MeteredTool, ctx: ToolContext, args: unknown): Promise<unknown> {
  const { usage, deps } = ctx.services;
  const snapshot = await deps.reads.getSnapshot(ctx.accountId);
  if (!snapshot) throw new ApiError('invalid_api_key');
  const { category } = tool.metered;
  const expected = { records: tool.metered.expectedRecords?.(args) ?? 0, requests: 1 };
  unwrap(usage.precheck(snapshot, category, expected, tool.metered.tokenCost(args, expected.records)));

  const { results, records } = await tool.run(ctx, args);
  if (!Number.isSafeInteger(records) || records < 0) {
    throw new Error(`Tool ${tool.name} returned an invalid record count: ${String(records)}`);
  }

  const committed = await usage.meter({
    snapshot,
    category,
    amounts: { records, requests: 1 },
    tokenCost: tool.metered.tokenCost(args, records),
    reason: tool.name,
    render: (windows, now) => ({
      results,
      status: 'ok' as const,
      metadata: { fair_use: fairUseMetadata(snapshot.plan.limits, windows, category, now) },
    }),
  });
  return unwrap(committed).response;
}
