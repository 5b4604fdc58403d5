/** @module A minimal client of toolgate's admin API, and the seeding the scenarios share. */

export interface Answer {
  status: number;
  body: unknown;
}

/** One JSON call; throws only when the server cannot be reached. */
export async function call(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: keep the text for the error message.
  }
  return { status: response.status, body: parsed };
}

/** Like `call`, but anything other than `expected` is an error naming the call and the answer. */
export async function expectStatus(
  expected: number,
  ...args: Parameters<typeof call>
): Promise<Record<string, unknown>> {
  const answer = await call(...args);
  if (answer.status !== expected) {
    throw new Error(
      `${args[2]} ${args[3]}: expected ${expected}, got ${answer.status}: ${JSON.stringify(answer.body).slice(0, 500)}`,
    );
  }
  return answer.body as Record<string, unknown>;
}

/**
 * What toolgate holds for `accounts`, summed: a category's 5 h windows (requests and records) and
 * the token balances.
 */
export async function accountTotals(
  baseUrl: string,
  adminToken: string,
  accounts: readonly { id: string }[],
  category: 'enrich' | 'search',
): Promise<{ requests: number; records: number; tokenBalance: number }> {
  type Windows = { requests?: { '5h'?: { used?: number } }; records?: { '5h'?: { used?: number } } };
  let requests = 0;
  let records = 0;
  let tokenBalance = 0;
  for (const a of accounts) {
    const account = (await expectStatus(200, baseUrl, adminToken, 'GET', `/admin/v1/accounts/${a.id}`)) as {
      fair_use?: Partial<Record<'enrich' | 'search', Windows>>;
      token_balance?: number;
    };
    const windows = account.fair_use?.[category];
    requests += windows?.requests?.['5h']?.used ?? 0;
    records += windows?.records?.['5h']?.used ?? 0;
    tokenBalance += account.token_balance ?? 0;
  }
  return { requests, records, tokenBalance };
}

export interface SeededAccount {
  id: string;
  /** The account's one API key (shown once by the admin API, kept here for the load). */
  key: string;
}

/** A plan whose limits the bench never reaches, so every consumption is accepted. */
export const BENCH_PLAN_ID = 'bench';
const HUGE = 1_000_000_000;
const limitsOf = () => ({ records: { '5h': HUGE, '1w': HUGE }, requests: { '5h': HUGE } });
export const BENCH_PLAN = { unlimited: false, limits: { enrich: limitsOf(), search: limitsOf() } };

/** `fn(0)` to `fn(count - 1)`, at most `concurrency` of them under way at once. */
export async function forEachConcurrently(
  count: number,
  concurrency: number,
  fn: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) await fn(i);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** The bench plan, then `count` accounts on it with one key each, through the admin API. */
export async function seedAccounts(
  baseUrl: string,
  adminToken: string,
  count: number,
  concurrency = 8,
): Promise<SeededAccount[]> {
  await expectStatus(200, baseUrl, adminToken, 'PUT', `/admin/v1/plans/${BENCH_PLAN_ID}`, BENCH_PLAN);
  const accounts: SeededAccount[] = new Array(count);
  await forEachConcurrently(count, concurrency, async (i) => {
    const name = `bench-${String(i + 1).padStart(6, '0')}`;
    const account = await expectStatus(201, baseUrl, adminToken, 'POST', '/admin/v1/accounts', {
      name,
      plan: BENCH_PLAN_ID,
    });
    const id = String(account.id);
    const key = await expectStatus(201, baseUrl, adminToken, 'POST', `/admin/v1/accounts/${id}/keys`, {
      name: 'bench',
    });
    accounts[i] = { id, key: String(key.key) };
  });
  return accounts;
}
