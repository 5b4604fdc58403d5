/**
 * Whether this copy of the project has its git history: a checkout does, a source tarball (no
 * `.git`) or a shallow clone does not. Tests that read the history (the bench's "before" builds)
 * are skipped then, with a loud notice on stderr, unless TOOLGATE_REQUIRE_GIT_HISTORY=1, in which
 * case they fail.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const REQUIRED = process.env.TOOLGATE_REQUIRE_GIT_HISTORY === '1';

/** Why `repo` has no usable git history, or undefined when it has one. */
export function missingGitHistory(repo: string): string | undefined {
  if (!existsSync(join(repo, '.git'))) return `${repo} has no .git (a source tarball?)`;
  const shallow = spawnSync('git', ['rev-parse', '--is-shallow-repository'], { cwd: repo, encoding: 'utf8' });
  if (shallow.status !== 0)
    return `git does not read ${repo}: ${shallow.stderr.trim() || `exit ${shallow.status}`}`;
  if (shallow.stdout.trim() === 'true') return `${repo} is a shallow clone: its history is cut`;
  return undefined;
}

/** Whether `repo` has its git history; prints the notice (or throws, when required) when it has not. */
export function gitHistoryAvailable(repo: string, what: string): boolean {
  const why = missingGitHistory(repo);
  if (why === undefined) return true;
  if (REQUIRED) throw new Error(`TOOLGATE_REQUIRE_GIT_HISTORY=1 but ${why}`);
  process.stderr.write(
    `\n${'!'.repeat(78)}\n!! ${why}.\n!! ${what} need the git history: SKIPPED. Run them in a git checkout, or set TOOLGATE_REQUIRE_GIT_HISTORY=1 to fail instead.\n${'!'.repeat(78)}\n\n`,
  );
  return false;
}
