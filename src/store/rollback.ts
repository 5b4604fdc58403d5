/** @module Rolling a transaction back with an answer: refusals are outcomes, not errors. */
import type { LedgerOutcome, UsageOutcome } from './store.js';

/** Thrown inside a transaction to roll it back and answer with `outcome`. */
export class Rollback {
  constructor(readonly outcome: UsageOutcome | LedgerOutcome) {}
}
