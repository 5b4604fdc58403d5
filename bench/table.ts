/**
 * @module `npm run bench:table`: writes docs/performance.md's targets table (between its marker
 * comments) from bench/results/latest.json; with `--check`, only says whether it is up to date
 * (exit 1 when not). `npm run bench` does the same at the end of a run that recorded figures.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BACKENDS } from './lib/args.js';
import { replaceBetweenMarkers, targetRows, targetsTable } from './lib/doc-table.js';
import { ROOT } from './lib/processes.js';
import { readLatest } from './lib/results.js';
import { SCENARIOS } from './scenarios/index.js';

export const LATEST_FILE = join(ROOT, 'bench', 'results', 'latest.json');
export const PERFORMANCE_DOC = join(ROOT, 'docs', 'performance.md');

/** Writes the doc's table from the figures file; false when it was already up to date. */
export function updateDoc(latestFile = LATEST_FILE, doc = PERFORMANCE_DOC, write = true): boolean {
  const before = readFileSync(doc, 'utf8');
  const after = replaceBetweenMarkers(
    before,
    targetsTable(targetRows(SCENARIOS, BACKENDS), readLatest(latestFile)),
  );
  if (after === before) return false;
  if (write) writeFileSync(doc, after);
  return true;
}

if (process.argv[1]?.endsWith(join('bench', 'table.js'))) {
  const check = process.argv.includes('--check');
  const changed = updateDoc(LATEST_FILE, PERFORMANCE_DOC, !check);
  process.stdout.write(
    check
      ? `${PERFORMANCE_DOC}: ${changed ? 'the targets table is NOT the one made from' : 'the targets table is made from'} ${LATEST_FILE}\n`
      : `${PERFORMANCE_DOC}: ${changed ? 'targets table written' : 'targets table already up to date'}\n`,
  );
  if (check && changed) process.exitCode = 1;
}
