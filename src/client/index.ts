/** @module The typed toolgate client (`toolgate/client`): no server code, only global fetch. */
export { ToolgateError, type ToolgateErrorInit } from './errors.js';
export { DEFAULT_TIMEOUT_MS, ToolgateClient, type ToolgateClientOptions } from './toolgate-client.js';
export type {
  AccountRecord,
  CategoryFairUse,
  ErrorBody,
  FairUse,
  FairUseCategory,
  FairUseMetadata,
  FairUseWindow,
  GetAccountResponse,
} from './types.js';
