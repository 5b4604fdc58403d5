/**
 * @module Use cases on the tool catalogue: import a catalogue file (all or nothing, every problem
 * listed; or a dry run saying what would change), put, show, list and remove one tool. Each change
 * is audited, and this server's live catalogue is told at once (the others learn it by polling).
 */
import type { JsonValue } from '../domain/audit.js';
import { type Problem, parseCatalogue, parseTool, type ToolDefinition } from '../domain/catalogue.js';
import { isoSeconds } from '../domain/clock.js';
import { fail, ok, type Result } from '../domain/errors.js';
import type { StoredTool, ToolPutOutcome } from '../store/store.js';
import { type AuditContext, draftAudit } from './audit.js';
import { now, type ServiceDeps } from './context.js';

/** A tool as the admin API and the CLI show it: its definition, and when it was created and last changed. */
export type ToolRecord = ToolDefinition & { created_at: string; updated_at: string };

export interface ImportAnswer {
  dry_run: boolean;
  /** The catalogue's revision after the import (before it, on a dry run). */
  revision: number;
  /** Every tool of the file, as it is (or would be) stored, and what became (or would become) of it. */
  tools: (ToolDefinition & { outcome: ToolPutOutcome })[];
}

export const toolRecord = (t: StoredTool): ToolRecord => ({
  ...t.definition,
  created_at: isoSeconds(t.createdAt),
  updated_at: isoSeconds(t.updatedAt),
});

function refused(problems: Problem[], what: string): Result<never> {
  const n = problems.length;
  return fail('invalid_arguments', `${what} has ${n} problem${n === 1 ? '' : 's'}; nothing was changed.`, {
    problems,
  });
}

export class CatalogueService {
  constructor(private readonly deps: ServiceDeps) {}

  async import(
    input: unknown,
    opts: { dryRun?: boolean } = {},
    by?: AuditContext,
  ): Promise<Result<ImportAnswer>> {
    const parsed = parseCatalogue(input, this.deps.upstreamEnv);
    if (!parsed.ok) return refused(parsed.problems, 'The catalogue');
    const { tools } = parsed;
    if (opts.dryRun) {
      const { revision, tools: stored } = await this.deps.store.catalogue.list();
      const before = new Map(stored.map((t) => [t.definition.name, JSON.stringify(t.definition)]));
      const outcome = (t: ToolDefinition): ToolPutOutcome => {
        const prior = before.get(t.name);
        return prior === undefined ? 'created' : prior === JSON.stringify(t) ? 'unchanged' : 'updated';
      };
      return ok({
        dry_run: true,
        revision,
        tools: tools.map((t) => ({ ...t, outcome: outcome(t) })),
      });
    }
    const { revision, outcomes } = await this.save(tools, by);
    return ok({
      dry_run: false,
      revision,
      tools: tools.map((t, i) => ({ ...t, outcome: outcomes[i]! })),
    });
  }

  /** The admin API's PUT: one tool, created or replaced whole. */
  async put(
    name: string,
    input: unknown,
    by?: AuditContext,
  ): Promise<Result<ToolRecord & { outcome: ToolPutOutcome }>> {
    const parsed = parseTool(name, input, this.deps.upstreamEnv);
    if (!parsed.ok) return refused(parsed.problems, `The tool "${name.slice(0, 64)}"`);
    const { outcomes } = await this.save([parsed.tool], by);
    const stored = await this.deps.store.catalogue.get(name);
    if (!stored) return fail('not_found', `No tool "${name}".`);
    return ok({ ...toolRecord(stored), outcome: outcomes[0]! });
  }

  async list(): Promise<ToolRecord[]> {
    return (await this.deps.store.catalogue.list()).tools.map(toolRecord);
  }

  async get(name: string): Promise<Result<ToolRecord>> {
    const stored = await this.deps.store.catalogue.get(name);
    return stored ? ok(toolRecord(stored)) : fail('not_found', `No tool "${name.slice(0, 64)}".`);
  }

  async remove(name: string, by?: AuditContext): Promise<Result<ToolRecord>> {
    const audit = draftAudit(this.deps, by, 'tool.remove', null, name, { name });
    const removed = await this.deps.store.catalogue.remove(name, audit);
    if (!removed) return fail('not_found', `No tool "${name.slice(0, 64)}".`);
    await this.deps.catalogueChanged?.();
    return ok(toolRecord(removed));
  }

  private async save(tools: readonly ToolDefinition[], by: AuditContext | undefined) {
    const audits = tools.map((t) => draftAudit(this.deps, by, 'tool.put', null, t.name, auditDetails(t)));
    const put = await this.deps.store.catalogue.put(tools, now(this.deps), audits);
    if (put.outcomes.some((o) => o !== 'unchanged')) await this.deps.catalogueChanged?.();
    return put;
  }
}

/**
 * What the trail keeps of a tool: where it forwards and how it is metered. Not its header values,
 * which may hold a secret written in place of a ${NAME}; only their names.
 */
function auditDetails(t: ToolDefinition): Record<string, JsonValue> {
  const url = new URL(t.upstream.url);
  return {
    upstream: `${url.origin}${url.pathname}`,
    header_names: Object.keys(t.upstream.headers),
    metering: t.metering as unknown as JsonValue,
  };
}
