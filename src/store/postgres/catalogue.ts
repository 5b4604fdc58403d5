/** @module PostgreSQL's tool catalogue: the tools' definitions and the catalogue's revision (store.ts, CatalogueStore). */
import type { AuditEntry } from '../../domain/audit.js';
import type { ToolDefinition } from '../../domain/catalogue.js';
import type { EpochSeconds } from '../../domain/clock.js';
import { CATALOGUE_SELECT, type ToolRow, toCatalogue, toStoredTool } from '../rows.js';
import type { CatalogueStore, StoredTool, ToolPutOutcome } from '../store.js';
import { writeAudit } from './audit.js';
import { guard, type PgQueryable } from './driver.js';
import type { PgTransactions } from './transactions.js';

export class PgCatalogue implements CatalogueStore {
  constructor(private readonly t: PgTransactions) {}

  async revision(): Promise<number> {
    const row = await guard(() =>
      this.t.one<{ revision: string }>({
        name: 'tg_catalogue_revision',
        text: 'SELECT revision FROM tool_catalogue',
      }),
    );
    return Number(row?.revision ?? 0);
  }

  async list(): Promise<{ revision: number; tools: StoredTool[] }> {
    return toCatalogue(await guard(() => this.t.all<ToolRow>(CATALOGUE_SELECT)));
  }

  async get(name: string): Promise<StoredTool | undefined> {
    const row = await guard(() => this.t.one<ToolRow>('SELECT * FROM tools WHERE name = $1', [name]));
    return row && toStoredTool(row);
  }

  put(
    tools: readonly ToolDefinition[],
    now: EpochSeconds,
    audits: readonly (AuditEntry | undefined)[] = [],
  ): Promise<{ revision: number; outcomes: ToolPutOutcome[] }> {
    return this.t.tx(async (db) => {
      // Taken first: concurrent imports are applied one after the other, each seeing the last.
      const revision = await lockRevision(this.t, db);
      const outcomes: ToolPutOutcome[] = [];
      for (const [i, tool] of tools.entries()) {
        const definition = JSON.stringify(tool);
        const prior = await this.t.one<{ definition: string }>(
          'SELECT definition FROM tools WHERE name = $1',
          [tool.name],
          db,
        );
        if (prior?.definition === definition) {
          outcomes.push('unchanged');
          continue;
        }
        await db.query(
          `INSERT INTO tools (name, definition, created_at, updated_at) VALUES ($1, $2, $3, $3)
           ON CONFLICT (name) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at`,
          [tool.name, definition, now],
        );
        await writeAudit(audits[i], db);
        outcomes.push(prior ? 'updated' : 'created');
      }
      const changed = outcomes.some((o) => o !== 'unchanged');
      return { revision: changed ? await raiseRevision(this.t, db) : revision, outcomes };
    });
  }

  remove(name: string, audit?: AuditEntry): Promise<StoredTool | undefined> {
    return this.t.tx(async (db) => {
      await lockRevision(this.t, db);
      const row = await this.t.one<ToolRow>('DELETE FROM tools WHERE name = $1 RETURNING *', [name], db);
      if (!row) return undefined;
      await writeAudit(audit, db);
      await raiseRevision(this.t, db);
      return toStoredTool(row);
    });
  }
}

async function lockRevision(t: PgTransactions, db: PgQueryable): Promise<number> {
  const row = await t.one<{ revision: string }>('SELECT revision FROM tool_catalogue FOR UPDATE', [], db);
  return Number(row!.revision);
}

async function raiseRevision(t: PgTransactions, db: PgQueryable): Promise<number> {
  const row = await t.one<{ revision: string }>(
    'UPDATE tool_catalogue SET revision = revision + 1 RETURNING revision',
    [],
    db,
  );
  return Number(row!.revision);
}
