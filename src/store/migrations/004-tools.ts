/**
 * @module Migration 004: the tool catalogue. A tool's definition is kept as the JSON it was given
 * (text on both backends, so it reads back in the order it was written), and one revision number
 * for the whole catalogue, raised by every change: each server polls that one row to learn, within a
 * second, that its compiled catalogue is out of date.
 */
import type { Migration } from './index.js';

const tables = (integer: string) => `
    CREATE TABLE tools (
      name        TEXT PRIMARY KEY,
      definition  TEXT NOT NULL,
      created_at  ${integer} NOT NULL,
      updated_at  ${integer} NOT NULL
    );
    CREATE TABLE tool_catalogue (
      id        INTEGER PRIMARY KEY CHECK (id = 1),
      revision  ${integer} NOT NULL
    );
    INSERT INTO tool_catalogue (id, revision) VALUES (1, 0);
  `;

export const tools: Migration = {
  version: 4,
  name: 'tools',
  sqlite: tables('INTEGER'),
  postgres: tables('BIGINT'),
};
