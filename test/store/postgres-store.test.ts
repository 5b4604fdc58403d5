import { describe } from 'vitest';
import { postgresAvailable, scratchPostgresStore } from '../postgres.js';
import { catalogueContract } from './catalogue-contract.js';
import { storeContract } from './contract.js';
import { metersContract } from './meters-contract.js';
import { usageHistoryContract } from './usage-history-contract.js';
import { webhooksContract } from './webhooks-contract.js';

const available = await postgresAvailable();

describe.skipIf(!available)('PostgreSQL backend', () => {
  storeContract('PostgreSQL', async () => scratchPostgresStore());
  catalogueContract('PostgreSQL', async () => scratchPostgresStore());
  usageHistoryContract('PostgreSQL', async () => scratchPostgresStore());
  webhooksContract('PostgreSQL', async () => scratchPostgresStore());
  metersContract('PostgreSQL', async () => scratchPostgresStore());
});
