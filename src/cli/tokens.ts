/** @module `toolgate tokens`: grant, charge, adjust (idempotent by key) and the ledger. */
import type { Command } from 'commander';
import { MAX_TOKENS } from '../domain/ledger.js';
import { DEFAULT_PAGE, MAX_PAGE } from '../service/context.js';
import type { LedgerRecord, TokenAnswer } from '../service/tokens.js';
import { wholeNumber } from './args.js';
import { withAdmin } from './context.js';
import { balanceText, emit, JSON_HELP, type JsonOption, orDash } from './output.js';
import { moreMayFollow, table } from './table.js';

type Kind = 'grant' | 'charge' | 'adjust';

const KINDS: ReadonlyArray<{ kind: Kind; description: string; amount: (v: string) => number }> = [
  {
    kind: 'grant',
    description: 'add tokens to an account',
    amount: wholeNumber('<amount>', 1, MAX_TOKENS),
  },
  {
    kind: 'charge',
    description:
      'take tokens from an account (refused if the balance is short; unlimited accounts pay nothing)',
    amount: wholeNumber('<amount>', 1, MAX_TOKENS),
  },
  {
    kind: 'adjust',
    description: 'correct the balance by a signed amount (for example -5)',
    amount: wholeNumber('<amount>', -MAX_TOKENS, MAX_TOKENS, { nonZero: true }),
  },
];

interface LedgerOptions extends JsonOption {
  reason?: string;
  idempotencyKey?: string;
}

export function registerTokens(program: Command): void {
  const tokens = program.command('tokens').description('grant, charge or adjust tokens; read the ledger');

  for (const { kind, description, amount } of KINDS) {
    tokens
      .command(kind)
      .description(description)
      .argument('<account-id>')
      .argument('<amount>', 'a whole number of tokens', amount)
      .option('--reason <text>', 'why, kept in the ledger')
      .option('--idempotency-key <key>', 'the same key again applies once and answers the same')
      .option('--json', JSON_HELP)
      .action(async (accountId: string, n: number, opts: LedgerOptions) => {
        const answer = await withAdmin(opts, (a) =>
          a.tokens.apply(accountId, {
            kind,
            amount: n,
            ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
            ...(opts.idempotencyKey !== undefined ? { idempotency_key: opts.idempotencyKey } : {}),
          }),
        );
        emit(opts, answer, () => describe(kind, accountId, n, answer));
      });
  }

  tokens
    .command('ledger')
    .description("an account's ledger, oldest first")
    .argument('<account-id>')
    .option('--limit <n>', `how many entries (default ${DEFAULT_PAGE})`, wholeNumber('--limit', 1, MAX_PAGE))
    .option('--after <entry-id>', 'start after this entry')
    .option('--json', JSON_HELP)
    .action(async (accountId: string, opts: JsonOption & { limit?: number; after?: string }) => {
      const limit = opts.limit ?? DEFAULT_PAGE;
      const entries = await withAdmin(opts, (a) => a.tokens.ledger(accountId, { limit, after: opts.after }));
      emit(opts, entries, () => ledgerTable(accountId, entries, limit));
    });
}

function describe(kind: Kind, accountId: string, amount: number, a: TokenAnswer): string {
  if (a.entry === null) return `Account ${accountId} is unlimited: nothing charged.`;
  const done =
    kind === 'grant'
      ? `Granted ${amount} tokens to ${accountId}`
      : kind === 'charge'
        ? `Charged ${amount} tokens to ${accountId}`
        : `Adjusted ${accountId} by ${signed(amount)} tokens`;
  const replay = a.replayed
    ? ` (already applied under idempotency key "${a.entry.idempotency_key}" as ${a.entry.id}; counted once)`
    : ` (${a.entry.id})`;
  return `${done}${replay}. Balance: ${balanceText(a.token_balance)}.`;
}

const signed = (n: number) => (n > 0 ? `+${n}` : String(n));

function ledgerTable(accountId: string, entries: LedgerRecord[], limit: number): string {
  if (entries.length === 0) return `Account ${accountId} has no ledger entries.`;
  const out = table(
    // The id is for paging (the hint below has it whole): left out first, then the idempotency key.
    [
      'created',
      'kind',
      'change',
      'balance',
      'reason',
      { name: 'idempotency key', optional: true },
      { name: 'id', optional: true },
    ],
    entries.map((e) => [
      e.created_at,
      e.kind,
      signed(e.delta),
      e.balance_after,
      orDash(e.reason),
      orDash(e.idempotency_key),
      e.id,
    ]),
  );
  const last = entries[entries.length - 1];
  return entries.length === limit && last
    ? `${out}\n\n${moreMayFollow(`toolgate tokens ledger ${accountId} --after ${last.id}`)}`
    : out;
}
