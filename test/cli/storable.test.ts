/**
 * The CLI, run as a process, on SQLite and on PostgreSQL: a catalogue file whose strings PostgreSQL
 * cannot store (NUL, an unpaired surrogate, in the pointers that reach the audit trail) is refused
 * whole with a problem naming each, exit 1, on both backends alike, and nothing is written.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore, scratchSchemaName } from '../postgres.js';
import { type Scratch, scratch } from './run-cli.js';

const catalogue = {
  tools: [
    {
      name: 'nul_pointer',
      upstream: { url: 'http://127.0.0.1:9/a' },
      metering: { category: 'enrich', records_pointer: '/results\u0000' },
    },
    {
      name: 'surrogate_pointer',
      upstream: { url: 'http://127.0.0.1:9/b' },
      metering: { category: 'search', expected_records_pointer: '/limit\ud800' },
    },
  ],
};

const schema = scratchSchemaName();
const cases: { name: string; env: () => NodeJS.ProcessEnv }[] = [{ name: 'SQLite', env: () => ({}) }];
if (await postgresAvailable())
  cases.push({
    name: 'PostgreSQL',
    env: () => ({
      TOOLGATE_DATABASE_URL: POSTGRES_URL,
      TOOLGATE_DATABASE_SCHEMA: schema,
      TOOLGATE_KEY_SECRET: 'cli-key-secret-0123456789abcdef0123456789',
    }),
  });

for (const backend of cases) {
  describe(`toolgate tools import, on ${backend.name}`, () => {
    let t: Scratch;
    beforeAll(async () => {
      t = scratch(backend.env());
      expect((await t.run('migrate')).code).toBe(0);
    });
    afterAll(async () => {
      t?.cleanup();
      if (backend.name === 'PostgreSQL') await scratchPostgresStore(schema).cleanup();
    });

    it('refuses pointers holding NUL or an unpaired surrogate, naming each, exit 1, nothing written', async () => {
      const path = join(t.dir, 'catalogue.json');
      // JSON.stringify writes both as \u escapes, as an operator's file would hold them.
      writeFileSync(path, JSON.stringify(catalogue));
      const human = await t.run('tools', 'import', path);
      expect(human.code, human.stdout + human.stderr).toBe(1);
      expect(human.stderr).toContain('/tools/0/metering/records_pointer');
      expect(human.stderr).toContain('/tools/1/metering/expected_records_pointer');
      expect(human.stderr).toContain('must not contain NUL or an unpaired surrogate');
      expect(await t.json('tools', 'list')).toEqual([]);
    });
  });
}
