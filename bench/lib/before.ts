/**
 * @module toolgate as it was before a piece of work (the meters, OAuth), built beside this checkout for
 * side-by-side rounds: the commit before the one that added its migration (or the variable naming one), taken
 * out of git with `git archive` into a directory of its own under the temp dir (the repository and
 * its work tree are left alone), compiled with this checkout's TypeScript, and run on this
 * checkout's node_modules (a symlink: no install). Built once per commit; later runs reuse it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './processes.js';

/** A piece of work measured against the build before it: the migration whose arrival marks it. */
export interface Milestone {
  /** What the work is, for titles: "the meters". */
  name: string;
  migration: string;
  /** The variable that names another commit to measure as "before". */
  env: string;
}

export const METERS: Milestone = {
  name: 'the meters',
  migration: 'src/store/migrations/009-meters.ts',
  env: 'TOOLGATE_BENCH_BEFORE',
};

export const OAUTH: Milestone = {
  name: 'OAuth',
  migration: 'src/store/migrations/012-oauth.ts',
  env: 'TOOLGATE_BENCH_BEFORE_OAUTH',
};

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr.trim() || `exit ${r.status}`}`);
  return r.stdout.trim();
}

/** The commit measured as "before" `work`: its variable's commit, else the parent of the commit adding its migration. */
export function beforeCommit(
  work: Milestone = METERS,
  env: NodeJS.ProcessEnv = process.env,
  repo = ROOT,
): string {
  const asked = env[work.env];
  if (asked) return git(repo, 'rev-parse', '--verify', `${asked}^{commit}`);
  const added = git(repo, 'log', '--diff-filter=A', '--format=%H', '--', work.migration).split('\n').at(-1);
  if (!added) throw new Error(`no commit adds ${work.migration}: set ${work.env} to a commit`);
  return git(repo, 'rev-parse', `${added}^`);
}

/** The before build's root (its dist/main.js ready): built now unless a run built it already. */
export function buildBefore(commit: string, progress: (line: string) => void): string {
  const root = join(tmpdir(), `toolgate-before-${commit.slice(0, 12)}`);
  if (existsSync(join(root, 'dist', 'main.js'))) return root;
  progress(`bench: building toolgate at ${commit.slice(0, 12)} (a before side) into ${root}...`);
  // Built in a directory of its own, renamed into place once complete: a build cut short is not reused.
  const building = `${root}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  const archive = spawnSync('git', ['archive', '--format=tar', commit], {
    cwd: ROOT,
    maxBuffer: 1 << 30,
    timeout: 120_000,
  });
  if (archive.status !== 0) throw new Error(`git archive ${commit}: ${archive.stderr.toString().trim()}`);
  const untar = spawnSync('tar', ['-x', '-C', building], { input: archive.stdout, timeout: 120_000 });
  if (untar.status !== 0) throw new Error(`tar: ${untar.stderr.toString().trim()}`);
  symlinkSync(join(ROOT, 'node_modules'), join(building, 'node_modules'), 'dir');
  const tsc = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    { cwd: building, encoding: 'utf8', timeout: 600_000 },
  );
  if (tsc.status !== 0)
    throw new Error(`building ${commit.slice(0, 12)} failed:\n${(tsc.stdout + tsc.stderr).slice(-4000)}`);
  rmSync(root, { recursive: true, force: true });
  renameSync(building, root);
  return root;
}
