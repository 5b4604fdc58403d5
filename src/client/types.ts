/**
 * @module The tools API's response shapes, written by hand from the get_account spec so the client
 * needs nothing from the server. Field names and nesting are exactly the wire format.
 */

/** One fair-use window: its quota, what is used, what is left, and when it ends (null: not running). */
export interface FairUseWindow {
  limit: number;
  used: number;
  remaining: number;
  /** ISO 8601 UTC (`2026-04-15T18:55:29Z`) while the window runs; null when nothing is used in it. */
  resets_at: string | null;
}

/** A category's windows: `records` has `5h` and `1w`, `requests` has `5h` only. */
export interface CategoryFairUse {
  records: { '5h': FairUseWindow; '1w': FairUseWindow };
  requests: { '5h': FairUseWindow };
}

export interface FairUse {
  enrich: CategoryFairUse;
  search: CategoryFairUse;
}

export type FairUseCategory = keyof FairUse;

/** The account record, `results` of get_account, fields in the spec's order. */
export interface AccountRecord {
  id: string;
  name: string;
  /** `active`, `suspended` or `closed` on toolgate; the spec leaves other values open. */
  status: string;
  /** A plan identifier, such as `free`. */
  plan: string;
  /** Remaining balance; -1 when the account is unlimited. */
  token_balance: number;
  unlimited: boolean;
  fair_use: FairUse;
  /** Active (not revoked) keys. */
  api_key_count: number;
  user_count: number;
  /** ISO 8601 UTC. */
  created_at: string;
}

/** `metadata.fair_use`: the records windows, with a reset a full window from now when not running. */
export interface FairUseMetadata {
  records_remaining_5h: number;
  records_reset_5h: string;
  records_remaining_1w: number;
  records_reset_1w: string;
}

export interface GetAccountResponse {
  results: AccountRecord;
  status: 'ok';
  metadata: { fair_use: FairUseMetadata };
}

/** Every error answer has this body; some codes add members (for example `window` and `resets_at`). */
export interface ErrorBody {
  status: 'error';
  /** The HTTP reason phrase. */
  error: string;
  /** A stable snake_case code, such as `invalid_api_key` or `fair_use_exceeded`. */
  code: string;
  message: string;
  request_id: string;
  [extra: string]: unknown;
}
