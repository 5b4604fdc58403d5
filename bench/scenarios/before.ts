/**
 * @module Before and after a piece of work, side by side: get_account and consumption (the admin
 * usage endpoint) against the build before the meters, and get_account over MCP with an API key
 * against the build before OAuth, sent alike to toolgate as it is and to toolgate built from that
 * commit (lib/before.ts), each on its own database of the same backend, seeded alike. The runner
 * alternates the two as it alternates any baseline and toolgate, so the ratio (after / before) is
 * of rounds run turn about in one run, not of runs apart. Run only when named (`--only before`):
 * the before build takes a minute the first time.
 */
import { type SeededAccount, seedAccounts } from '../lib/admin.js';
import { beforeCommit, buildBefore, METERS, type Milestone, OAUTH } from '../lib/before.js';
import {
  type PostgresSetup,
  startToolgatePostgres,
  startToolgateSqlite,
  type ToolgateTarget,
} from '../lib/targets.js';
import { consumption } from './consumption.js';
import { getAccount } from './get-account.js';
import { mcp2026 } from './mcp.js';
import type { Fixture, Scenario } from './scenario.js';

/** "Within 5% of before": the least after / before req/s ratio, on both backends. */
const WITHIN_5_PERCENT = 0.95;

interface BeforeSide {
  toolgate: ToolgateTarget;
  accounts: readonly SeededAccount[];
}

let setup: { postgres: PostgresSetup | null; progress: (line: string) => void } = {
  postgres: null,
  progress: () => {},
};

/** What the before side needs from the run: its PostgreSQL (null: none), and where progress goes. */
export function configureBefore(postgres: PostgresSetup | null, progress: (line: string) => void): void {
  setup = { postgres, progress };
}

/** One before server per piece of work and backend for the run, seeded with as many accounts as the after side. */
const sides = new Map<string, Promise<BeforeSide>>();

function beforeSide(f: Fixture, work: Milestone): Promise<BeforeSide> {
  const backend = f.toolgate.backend;
  let side = sides.get(`${work.name} ${backend}`);
  if (!side) {
    side = (async () => {
      const commit = beforeCommit(work);
      const root = buildBefore(commit, setup.progress);
      let toolgate: ToolgateTarget;
      if (backend === 'sqlite') toolgate = await startToolgateSqlite(null, root);
      else {
        if (!setup.postgres) throw new Error("the before side on PostgreSQL needs the run's PostgreSQL");
        toolgate = await startToolgatePostgres(setup.postgres, root);
      }
      setup.progress(
        `bench: toolgate before ${work.name} (${commit.slice(0, 12)}, ${backend}) at ${toolgate.url}; seeding ${f.accounts.length} accounts...`,
      );
      const accounts = await seedAccounts(toolgate.url, toolgate.adminToken, f.accounts.length);
      return { toolgate: { ...toolgate, name: `before ${commit.slice(0, 12)}` }, accounts };
    })();
    sides.set(`${work.name} ${backend}`, side);
  }
  return side;
}

/** Each fixture's before accounts, for the requests sent to the before side. */
const beforeAccounts = new Map<Fixture['toolgate'], readonly SeededAccount[]>();

function againstBefore(after: Scenario, id: string, work: Milestone = METERS): Scenario {
  // Judged by the ratio alone: the after side's own latency and PostgreSQL targets are its plain scenario's.
  const { p99Ms: _p99, stretch: _stretch, postgresTarget: _postgres, ...rest } = after;
  return {
    ...rest,
    id,
    group: 'before',
    title: `${after.title}, after / before ${work.name}`,
    description: `${after.description}; the other side is toolgate built from the commit before ${work.name}, on the same backend`,
    onlyWhenNamed: true,
    target: WITHIN_5_PERCENT,
    async prepare(f) {
      const prepared = after.prepare ? await after.prepare(f) : f;
      const before = await beforeSide(f, work);
      beforeAccounts.set(prepared.toolgate, before.accounts);
      return { ...prepared, baseline: before.toolgate };
    },
    baselineRequests(f) {
      // The same requests, made out to the before server's own accounts, keys and admin token.
      const before = beforeAccounts.get(f.toolgate)!;
      const token = (f.baseline as ToolgateTarget).adminToken;
      return after.requests({ ...f, accounts: before, toolgate: { ...f.toolgate, adminToken: token } });
    },
  };
}

export const getAccountBefore = againstBefore(getAccount, 'get_account_before');
export const consumptionBefore = againstBefore(consumption, 'consumption_before');
/** MCP with an API key does not drop with OAuth beside it: the same call to the build before OAuth. */
export const mcpBeforeOauth = againstBefore(mcp2026, 'mcp_before_oauth', OAUTH);
