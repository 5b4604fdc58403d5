/**
 * @module The data-tool pipeline. After authentication: account status (403), then, for a metered
 * tool, fair use (429) and tokens (402), all checked read-only before the tool runs; then the tool;
 * then one atomic commit of what it actually returned (a hit its requests, records and tokens; a miss
 * its request only). A refused or failed call spends nothing, and a commit that no longer fits
 * answers its refusal, never the data.
 */
import Type from 'typebox';
import { isUnlimited, statusRefusal } from '../domain/accounts.js';
import { ApiError, unwrap } from '../domain/api-error.js';
import { type Amounts, fairUseMetadata } from '../domain/fair-use.js';
import type { AccountSnapshot } from '../store/store.js';
import { FairUseMetadataSchema } from './schemas.js';
import {
  type DataTool,
  type Outcome,
  RawJson,
  type Tool,
  type ToolAnswer,
  type ToolContext,
  WithStatus,
} from './tool.js';

/** A tool's answer (a body, RawJson or WithStatus) and, for a data tool, what it came to. */
export interface Ran {
  out: unknown;
  outcome?: Outcome;
}

export function responseSchema(tool: Tool) {
  if (tool.kind === 'account') return tool.response;
  const tokens = { tokens_charged: Type.Integer(), tokens_remaining: Type.Integer() };
  return Type.Object({
    results: tool.results,
    status: Type.Union([Type.Literal('ok'), Type.Literal('not_found')]),
    metadata: Type.Object(
      tool.metered ? { fair_use: FairUseMetadataSchema, ...tokens } : tokens,
      // The tool's own metadata members pass through beside toolgate's.
      { additionalProperties: true },
    ),
  });
}

/** The tool's answer: at once when the tool has it at once (get_account from the read cache), else a promise. */
export function runTool(tool: Tool, ctx: ToolContext, args: unknown): Ran | Promise<Ran> {
  if (tool.kind !== 'account') return runData(tool, ctx, args);
  const out = tool.run(ctx, args);
  return out instanceof Promise ? out.then((o) => ({ out: o })) : { out };
}

function runData(tool: DataTool, ctx: ToolContext, args: unknown): Promise<Ran> {
  // From memory, mostly: not a promise to wait for then.
  const read = ctx.deps.reads.getSnapshot(ctx.accountId);
  if (read instanceof Promise) return read.then((snapshot) => runOn(tool, ctx, args, snapshot));
  return runOn(tool, ctx, args, read);
}

function runOn(
  tool: DataTool,
  ctx: ToolContext,
  args: unknown,
  snapshot: AccountSnapshot | undefined,
): Promise<Ran> {
  if (!snapshot) return Promise.reject(new ApiError('invalid_api_key'));
  const metering = tool.metered;
  if (metering) return runMetered(tool, metering, ctx, args, snapshot);
  const refused = statusRefusal(snapshot.account.status);
  if (refused && !refused.ok) return Promise.reject(ApiError.from(refused.error));
  // A free tool: its answer wrapped, through one promise.
  return tool.run(ctx, args).then((answer) => ({
    out: envelope(answer, { tokens_charged: 0, tokens_remaining: balanceOf(snapshot, null) }),
    outcome: { records: answer.missed ? 0 : answer.records, tokens: 0, missed: answer.missed === true },
  }));
}

async function runMetered(
  tool: DataTool,
  metering: NonNullable<DataTool['metered']>,
  ctx: ToolContext,
  args: unknown,
  snapshot: AccountSnapshot,
): Promise<Ran> {
  const { usage } = ctx.deps;
  const { category } = metering;
  const unit = metering.unit ?? 'records';
  const expectedCount = metering.expectedRecords?.(args) ?? 0;
  const hold = unwrap(
    usage.hold(snapshot, category, counted(unit, expectedCount), metering.tokenCost(args, expectedCount)),
  );
  let committed: Awaited<ReturnType<typeof usage.meter>>;
  let outcome: Outcome | undefined;
  try {
    const answer = await tool.run(ctx, args);
    const records = answer.missed ? 0 : answer.records;
    // A guessed count (0) would hand out what the upstream returned unmetered and uncharged.
    if (!Number.isSafeInteger(records) || records < 0) {
      ctx.log.warn({ tool: tool.name }, 'upstream record count is not a safe non-negative integer');
      throw new ApiError('upstream_error');
    }
    const unlimited = isUnlimited(snapshot.account, snapshot.plan);
    const cost = answer.missed || unlimited ? 0 : metering.tokenCost(args, records);
    committed = await usage.meter({
      snapshot,
      category,
      amounts: counted(unit, records),
      tokenCost: cost,
      reason: tool.name,
      render: (windows, now, balanceAfter) => {
        // The store has decided: the request is counted in its windows from here on, not held.
        hold.release();
        return envelope(answer, {
          fair_use: fairUseMetadata(snapshot.plan.limits, windows, category, now, unit),
          tokens_charged: cost,
          tokens_remaining: balanceOf(snapshot, balanceAfter),
        });
      },
    });
    if (committed.ok) outcome = { records, tokens: cost, missed: answer.missed === true, unit };
  } finally {
    hold.release();
  }
  return { out: unwrap(committed).response, outcome };
}

/** A call's amounts: what it counted, in the tool's unit, and the one request every call is. */
function counted(unit: string, amount: number): Amounts {
  // A literal for the usual unit: a computed key costs a dictionary-mode object per call.
  return unit === 'records' ? { records: amount, requests: 1 } : { [unit]: amount, requests: 1 };
}

/** The balance after the call: -1 when unlimited, the charge's balance when charged, else the account's. */
function balanceOf(snapshot: AccountSnapshot, balanceAfter: number | null): number {
  if (isUnlimited(snapshot.account, snapshot.plan)) return -1;
  return balanceAfter ?? snapshot.account.tokenBalance;
}

/**
 * `{results, status, metadata}`: the tool's metadata, then toolgate's members, which win a clash.
 * Results the tool has as JSON text already are written in as they are.
 */
function envelope(answer: ToolAnswer, own: Record<string, unknown>): unknown {
  const status = answer.missed ? 'not_found' : 'ok';
  const metadata = answer.metadata ? { ...answer.metadata, ...own } : own;
  const body = { results: answer.results, status, metadata };
  const out =
    answer.resultsJson === undefined
      ? body
      : new RawJson(
          `{"results":${answer.resultsJson},"status":"${status}","metadata":${JSON.stringify(metadata)}}`,
          body,
        );
  return answer.httpStatus !== undefined && answer.httpStatus !== 200
    ? new WithStatus(answer.httpStatus, out)
    : out;
}
