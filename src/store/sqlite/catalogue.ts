/** @module SQLite's tool catalogue: the tools' definitions and the catalogue's revision (store.ts, CatalogueStore). */
import type { AuditEntry } from '../../domain/audit.js';
import type { ToolDefinition } from '../../domain/catalogue.js';
import type { EpochSeconds } from '../../domain/clock.js';
import { CATALOGUE_SELECT, type ToolRow, toCatalogue, toStoredTool } from '../rows.js';
import type { CatalogueStore, StoredTool, ToolPutOutcome } from '../store.js';
import { writeAudit } from './audit.js';
import type { SqliteExecutor } from './executor.js';

export class SqliteCatalogue implements CatalogueStore {
  constructor(private readonly x: SqliteExecutor) {}

  revision(): Promise<number> {
    return this.x.attempt(() => this.currentRevision());
  }

  list(): Promise<{ revision: number; tools: StoredTool[] }> {
    return this.x.attempt(() => toCatalogue(this.x.sql(CATALOGUE_SELECT).all() as ToolRow[]));
  }

  async get(name: string): Promise<StoredTool | undefined> {
    const row = await this.x.attempt(
      () => this.x.sql('SELECT * FROM tools WHERE name = ?').get(name) as ToolRow | undefined,
    );
    return row && toStoredTool(row);
  }

  put(
    tools: readonly ToolDefinition[],
    now: EpochSeconds,
    audits: readonly (AuditEntry | undefined)[] = [],
  ): Promise<{ revision: number; outcomes: ToolPutOutcome[] }> {
    return this.x.writeTx(() => {
      const outcomes = tools.map((tool, i): ToolPutOutcome => {
        const definition = JSON.stringify(tool);
        const prior = this.x.sql('SELECT definition FROM tools WHERE name = ?').get(tool.name) as
          | { definition: string }
          | undefined;
        if (prior?.definition === definition) return 'unchanged';
        this.x
          .sql(
            `INSERT INTO tools (name, definition, created_at, updated_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (name) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at`,
          )
          .run(tool.name, definition, now, now);
        writeAudit(this.x, audits[i]);
        return prior ? 'updated' : 'created';
      });
      const changed = outcomes.some((o) => o !== 'unchanged');
      return { revision: changed ? this.raiseRevision() : this.currentRevision(), outcomes };
    });
  }

  remove(name: string, audit?: AuditEntry): Promise<StoredTool | undefined> {
    return this.x.writeTx(() => {
      const row = this.x.sql('DELETE FROM tools WHERE name = ? RETURNING *').get(name) as ToolRow | undefined;
      if (!row) return undefined;
      writeAudit(this.x, audit);
      this.raiseRevision();
      return toStoredTool(row);
    });
  }

  private currentRevision(): number {
    return (this.x.sql('SELECT revision FROM tool_catalogue').get() as { revision: number }).revision;
  }

  private raiseRevision(): number {
    return (
      this.x.sql('UPDATE tool_catalogue SET revision = revision + 1 RETURNING revision').get() as {
        revision: number;
      }
    ).revision;
  }
}
