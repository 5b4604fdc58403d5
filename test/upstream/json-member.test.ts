/** @module memberJson: the text it finds always parses to what JSON.parse took for that member. */

import { describe, expect, it } from 'vitest';
import { memberJson } from '../../src/upstream/json-member.js';
import { seededRandom } from '../seeded-random.js';

/** Strings meant to trip a scanner: quotes, backslashes, brackets, commas and colons inside. */
const NASTY = [
  '',
  'a"b',
  'a\\',
  '\\"',
  '\\\\"',
  '{',
  '}',
  '[]',
  '],',
  '":',
  '\u2028',
  'é',
  '😀',
  '\ud800',
  'results',
];

function value(r: () => number, depth: number): unknown {
  const pick = r();
  if (depth > 3 || pick < 0.35) {
    const s = r();
    if (s < 0.2) return NASTY[Math.floor(r() * NASTY.length)];
    if (s < 0.4) return Math.round((r() - 0.5) * 1e6) / 100;
    if (s < 0.5) return r() < 0.5;
    if (s < 0.6) return null;
    return `s${Math.floor(r() * 1000)}`;
  }
  if (pick < 0.65) return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(r() * 4); i > 0; i--) {
    o[r() < 0.2 ? NASTY[Math.floor(r() * NASTY.length)]! : `k${i}`] = value(r, depth + 1);
  }
  return o;
}

/** JSON text of `members` (duplicates allowed, in order), compact or spaced. */
function objectText(members: [string, unknown][], spaced: boolean): string {
  const sp = spaced ? ' \n\t' : '';
  const parts = members.map(
    ([k, v]) => `${sp}${JSON.stringify(k)}${sp}:${sp}${JSON.stringify(v, null, spaced ? 2 : undefined)}${sp}`,
  );
  return `${sp}{${parts.join(',')}}${sp}`;
}

describe('memberJson', () => {
  it('finds exactly the member JSON.parse took, over generated objects', () => {
    let found = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const r = seededRandom(seed);
      const members: [string, unknown][] = [];
      for (let i = Math.floor(r() * 5); i > 0; i--) {
        const name = r() < 0.4 ? 'results' : r() < 0.5 ? 'status' : NASTY[Math.floor(r() * NASTY.length)]!;
        members.push([name, value(r, 0)]);
      }
      const text = objectText(members, r() < 0.5);
      const parsed = JSON.parse(text) as Record<string, unknown>;
      const got = memberJson(text, 'results');
      if (!('results' in parsed)) {
        expect(got, `seed ${seed}: ${text}`).toBeUndefined();
        continue;
      }
      // Only a key written with an escape may make it give up.
      if (got === undefined && members.some(([k]) => JSON.stringify(k).includes('\\'))) continue;
      expect(got, `seed ${seed}: ${text}`).toBeDefined();
      expect(JSON.parse(got!), `seed ${seed}: ${text}`).toEqual(parsed.results);
      found++;
    }
    expect(found).toBeGreaterThan(1000);
  });

  it('keeps the value as written: spacing, number forms and escapes', () => {
    const text = '{"status":"ok","results": [ 1.50, 1e3, 12345678901234567890, "\\u00e9\\"" ] }';
    expect(memberJson(text, 'results')).toBe('[ 1.50, 1e3, 12345678901234567890, "\\u00e9\\"" ]');
    expect(memberJson('{"results":null}', 'results')).toBe('null');
    expect(memberJson('{"results":-0.5e-3,"x":1}', 'results')).toBe('-0.5e-3');
  });

  it('takes the last of duplicated keys, as JSON.parse does', () => {
    expect(memberJson('{"results":[1],"status":"ok","results":{"a":2}}', 'results')).toBe('{"a":2}');
  });

  it('gives up when a key is written with an escape (it may be the name)', () => {
    const text = '{"results":[1],"res\\u0075lts":[2]}';
    expect((JSON.parse(text) as { results: unknown }).results).toEqual([2]);
    expect(memberJson(text, 'results')).toBeUndefined();
    expect(memberJson('{"a\\"b":1,"results":[3]}', 'results')).toBeUndefined();
  });

  it('finds nothing in an object without the member, or in what is not an object', () => {
    expect(memberJson('{}', 'results')).toBeUndefined();
    expect(memberJson(' { } ', 'results')).toBeUndefined();
    expect(memberJson('{"result":1,"resultss":2}', 'results')).toBeUndefined();
    expect(memberJson('[{"results":1}]', 'results')).toBeUndefined();
    expect(memberJson('{"nested":{"results":1}}', 'results')).toBeUndefined();
  });
});
