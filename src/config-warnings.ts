/**
 * @module Warnings about the environment: a TOOLGATE_* variable nothing of toolgate reads (a
 * misspelling is otherwise silently ignored, and its default used), with the closest known name.
 */
import { CONFIG_VARIABLES } from './config.js';

/** TOOLGATE_* variables read by the CLI (an operator's shell may hold them while starting a server). */
const CLI_VARIABLES = ['TOOLGATE_URL', 'TOOLGATE_API_KEY', 'TOOLGATE_ALLOW_HTTP'];
/** Prefixes of the variables the test suite, the bench and CI read: theirs, not the server's. */
const TOOLING_PREFIXES = [
  'TOOLGATE_TEST_',
  'TOOLGATE_REQUIRE_',
  'TOOLGATE_BENCH_',
  'TOOLGATE_FUZZ_',
  'TOOLGATE_CI_',
];

/**
 * One warning per TOOLGATE_* variable that nothing of toolgate reads, naming the known one closest
 * to it: a misspelt variable is otherwise silently ignored, and its default used.
 */
export function unknownVariableWarnings(env: NodeJS.ProcessEnv): string[] {
  const known = [...CONFIG_VARIABLES.filter((n) => n.startsWith('TOOLGATE_')), ...CLI_VARIABLES];
  return Object.keys(env)
    .filter((name) => name.startsWith('TOOLGATE_') && !known.includes(name))
    .filter((name) => !TOOLING_PREFIXES.some((prefix) => name.startsWith(prefix)))
    .sort()
    .map((name) => {
      const [closest] = known
        .map((k) => ({ k, d: editDistance(name, k) }))
        .sort((a, b) => a.d - b.d || a.k.localeCompare(b.k));
      // Past a few edits the nearest name is a guess that would mislead more than help.
      const near = closest && closest.d <= Math.max(2, Math.floor(name.length / 5));
      return near
        ? `${name} is not a variable toolgate reads (ignored): did you mean ${closest.k}?`
        : `${name} is not a variable toolgate reads (ignored); docs/operations.md lists them`;
    });
}

/** Levenshtein distance: insertions, deletions and substitutions. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = row;
  }
  return previous[b.length]!;
}
