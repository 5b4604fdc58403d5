/** @module The numbered migration history, the same on every backend; applied in order, each once. */
import { initial } from './001-initial.js';
import { audit } from './002-audit.js';

export interface Migration {
  version: number;
  name: string;
  sqlite: string;
  postgres: string;
}

export const MIGRATIONS: readonly Migration[] = [initial, audit];

export function migrationLabel(m: Migration): string {
  return `${String(m.version).padStart(3, '0')}-${m.name}`;
}
