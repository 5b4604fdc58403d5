/** @module get_account: the calling account, free of charge; reads only (no balance or window changes). */
import Type from 'typebox';
import { ApiError } from '../domain/api-error.js';
import { AccountRecordSchema, FairUseMetadataSchema } from './schemas.js';
import { type AccountTool, RawJson } from './tool.js';

export const getAccount: AccountTool = {
  kind: 'account',
  name: 'get_account',
  summary: 'Details of the calling account',
  description:
    'Returns the account that owns the API key: name, plan, status, token balance (-1 when unlimited), ' +
    'active API keys, users, fair-use quotas and creation time. Free; consumes no credits. ' +
    'Answers for suspended accounts too, so a caller can confirm its status.',
  args: Type.Object({}, { additionalProperties: false, description: 'No arguments: send {}' }),
  response: Type.Object({
    results: AccountRecordSchema,
    status: Type.Literal('ok'),
    metadata: Type.Object({ fair_use: FairUseMetadataSchema }),
  }),
  run(ctx) {
    const json = ctx.deps.accountViewJson(ctx.accountId);
    return json instanceof Promise ? json.then(answer) : answer(json);
  },
};

function answer(json: string | undefined): RawJson {
  // The key authenticated a moment ago; an account that is gone since is the same as a bad key.
  if (json === undefined) throw new ApiError('invalid_api_key');
  return new RawJson(json);
}
