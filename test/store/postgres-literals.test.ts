/**
 * The literals of the statements sent without parameters (a group commit's): the same text as pg's
 * own escaping, and read back by the real server as the very string that was quoted, whatever
 * quotes, backslashes, JSON or Unicode it holds.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { quoteLiteral } from '../../src/store/postgres/driver.js';
import { POSTGRES_URL, postgresAvailable } from '../postgres.js';
import { seededRandom } from '../seeded-random.js';

const ALPHABET = [
  "'",
  '\\',
  '"',
  'a',
  'Z',
  '0',
  ' ',
  '\n',
  '\t',
  '{',
  '}',
  ':',
  'é',
  '日',
  '😀',
  "''",
  '\\\\',
];

function randomString(rng: () => number): string {
  const n = Math.floor(rng() * 24);
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(rng() * ALPHABET.length)];
  return s;
}

const SAMPLES = [
  '',
  "it's",
  'back\\slash',
  "both ' and \\",
  JSON.stringify([{ category: 'enrich', note: 'O\'Brien \\ "quoted"' }]),
  ...Array.from({ length: 500 }, (_, i) => randomString(seededRandom(i + 1))),
];

const postgres = await postgresAvailable();

describe('quoteLiteral', () => {
  it("gives pg's escapeLiteral text", () => {
    for (const s of SAMPLES) expect(quoteLiteral(s)).toBe(pg.escapeLiteral(s));
  });

  it.skipIf(!postgres)('is read back by PostgreSQL as the string quoted', async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      for (const conforming of ['on', 'off']) {
        await client.query(`SET standard_conforming_strings = ${conforming}`);
        const { rows } = await client.query<{ s: string }>(
          SAMPLES.map((s) => `SELECT ${quoteLiteral(s)}::text AS s`).join(' UNION ALL '),
        );
        expect(rows.map((r) => r.s)).toEqual(SAMPLES);
      }
    } finally {
      await client.end();
    }
  });
});
