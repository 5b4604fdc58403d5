/** @module Shared TypeBox schemas: the error body, and the pieces of the get_account answer as the spec defines them. */
import Type from 'typebox';
import { ERROR_STATUS, type ErrorCode } from '../domain/errors.js';

const Timestamp = Type.String({
  format: 'date-time',
  description: 'ISO 8601 UTC, whole seconds: 2026-04-15T13:55:29Z',
});

export const ErrorBodySchema = Type.Object(
  {
    status: Type.Literal('error'),
    error: Type.String({ description: 'The HTTP reason phrase' }),
    // One string with an `enum`, not a union of literals: a union compiles into a branch per code in
    // every route's validator and serialiser, which held about 3 MiB of the idle heap.
    code: Type.Unsafe<ErrorCode>({
      type: 'string',
      enum: Object.keys(ERROR_STATUS),
      description: 'Stable snake_case code',
    }),
    message: Type.String({ description: 'A sentence for people' }),
    request_id: Type.String({ description: 'Also in the x-request-id header' }),
  },
  { $id: 'ErrorBody', additionalProperties: true },
);

export const WindowSchema = Type.Object({
  limit: Type.Integer({ description: 'Quota for the window' }),
  used: Type.Integer({ description: 'Amount used in the window' }),
  remaining: Type.Integer({ description: 'Amount remaining in the window' }),
  // A type list, not anyOf: a serialiser compiled from anyOf runs a validator (date-time format
  // included) on every value to choose the branch.
  resets_at: Type.Unsafe<string | null>({
    type: ['string', 'null'],
    format: 'date-time',
    description: 'End of the running window (ISO 8601 UTC, whole seconds); null when not running',
  }),
});

/** A category's windows by unit and window, of any meter a plan names. */
const MeterCategorySchema = Type.Record(Type.String(), Type.Record(Type.String(), WindowSchema));

/** A default category; a plan may add units and windows of its own beside the spec's. */
export const CategoryFairUseSchema = Type.Object(
  {
    records: Type.Object({ '5h': WindowSchema, '1w': WindowSchema }, { additionalProperties: WindowSchema }),
    requests: Type.Object({ '5h': WindowSchema }, { additionalProperties: WindowSchema }),
  },
  { additionalProperties: Type.Record(Type.String(), WindowSchema) },
);

/** Every category of the plan, in its order: the defaults as the spec has them, others by the same rule. */
export const FairUseSchema = Type.Object(
  { enrich: Type.Optional(CategoryFairUseSchema), search: Type.Optional(CategoryFairUseSchema) },
  { additionalProperties: MeterCategorySchema },
);

/**
 * `<unit>_remaining_<window>` and `<unit>_reset_<window>` of each window of the unit the call counts
 * (records for get_account and the default tools: the spec's four members).
 */
export const FairUseMetadataSchema = Type.Object(
  {
    records_remaining_5h: Type.Optional(
      Type.Integer({ description: 'Records remaining in the 5-hour window' }),
    ),
    records_reset_5h: Type.Optional(
      Type.String({ format: 'date-time', description: 'Reset time of the 5-hour window' }),
    ),
    records_remaining_1w: Type.Optional(
      Type.Integer({ description: 'Records remaining in the 1-week window' }),
    ),
    records_reset_1w: Type.Optional(
      Type.String({ format: 'date-time', description: 'Reset time of the 1-week window' }),
    ),
  },
  {
    // A type list, not anyOf (see resets_at).
    additionalProperties: Type.Unsafe<number | string>({ type: ['integer', 'string'] }),
    description:
      'The windows of the category and unit the call counts: <unit>_remaining_<window> and ' +
      '<unit>_reset_<window> (pages_remaining_1d for a tool metered in pages)',
  },
);

/** The usage endpoint's answer: the consumption and its category's windows after it. */
export const UsageAnswerSchema = Type.Object({
  account_id: Type.String(),
  category: Type.String({ description: 'A category of the plan' }),
  // A record, not an object with records and requests named: its members go out in the order given.
  recorded: Type.Record(Type.String(), Type.Integer(), {
    description: 'The amounts counted, by unit: records and requests, or the unit given and requests',
  }),
  fair_use: Type.Object(
    { enrich: Type.Optional(CategoryFairUseSchema), search: Type.Optional(CategoryFairUseSchema) },
    {
      additionalProperties: MeterCategorySchema,
      description: 'The windows of the category consumed, after the consumption',
    },
  ),
  metadata: Type.Object({ fair_use: FairUseMetadataSchema }),
});

export const AccountRecordSchema = Type.Object({
  id: Type.String({ description: 'Unique account identifier' }),
  name: Type.String({ description: 'Account name' }),
  status: Type.String({ description: 'active, suspended or closed' }),
  plan: Type.String({ description: 'Current plan, an identifier string' }),
  token_balance: Type.Integer({
    description: 'Remaining balance; -1 when the account has an unlimited quota',
  }),
  unlimited: Type.Boolean({ description: 'true when the account has an unlimited quota' }),
  fair_use: FairUseSchema,
  api_key_count: Type.Integer({ description: 'Number of active API keys' }),
  user_count: Type.Integer({ description: 'Number of users in the account' }),
  created_at: Type.String({ format: 'date-time', description: 'Creation time of the account' }),
});

export { Timestamp };
