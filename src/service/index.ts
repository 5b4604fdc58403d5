/** @module The use cases, built once from their dependencies; HTTP routes and CLI commands call these. */

import { AccountService } from './accounts.js';
import { now, type ServiceDeps } from './context.js';
import { KeyService } from './keys.js';
import { PlanService } from './plans.js';
import { TokenService } from './tokens.js';
import { UsageService } from './usage.js';
import { UserService } from './users.js';
import { getAccountResponse } from './views.js';

export type { ServiceDeps } from './context.js';

export function createServices(deps: ServiceDeps) {
  return {
    deps,
    plans: new PlanService(deps),
    accounts: new AccountService(deps),
    keys: new KeyService(deps),
    users: new UserService(deps),
    tokens: new TokenService(deps),
    usage: new UsageService(deps),
    /** The `get_account` answer for an account; reads only. */
    async accountView(accountId: string) {
      const snapshot = await deps.store.getSnapshot(accountId);
      return snapshot && getAccountResponse(snapshot, now(deps));
    },
  };
}

export type Services = ReturnType<typeof createServices>;
