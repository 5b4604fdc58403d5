import { describe } from 'vitest';
import { postgresAvailable, scratchPostgresStore } from '../postgres.js';
import { accountsContract } from './accounts-contract.js';
import { alertsContract } from './alerts-contract.js';
import { auditContract } from './audit-contract.js';
import { catalogueContract } from './catalogue-contract.js';
import { keysContract } from './keys-contract.js';
import { ledgerContract } from './ledger-contract.js';
import { lifecycleContract } from './lifecycle-contract.js';
import { metersContract } from './meters-contract.js';
import { plansContract } from './plans-contract.js';
import { usageContract } from './usage-contract.js';
import { usageHistoryContract } from './usage-history-contract.js';
import { usersContract } from './users-contract.js';
import { webhooksContract } from './webhooks-contract.js';

const available = await postgresAvailable();

describe.skipIf(!available)('PostgreSQL backend', () => {
  lifecycleContract('PostgreSQL', async () => scratchPostgresStore());
  plansContract('PostgreSQL', async () => scratchPostgresStore());
  accountsContract('PostgreSQL', async () => scratchPostgresStore());
  keysContract('PostgreSQL', async () => scratchPostgresStore());
  usersContract('PostgreSQL', async () => scratchPostgresStore());
  ledgerContract('PostgreSQL', async () => scratchPostgresStore());
  usageContract('PostgreSQL', async () => scratchPostgresStore());
  auditContract('PostgreSQL', async () => scratchPostgresStore());
  catalogueContract('PostgreSQL', async () => scratchPostgresStore());
  usageHistoryContract('PostgreSQL', async () => scratchPostgresStore());
  webhooksContract('PostgreSQL', async () => scratchPostgresStore());
  alertsContract('PostgreSQL', async () => scratchPostgresStore());
  metersContract('PostgreSQL', async () => scratchPostgresStore());
});
