/** Talking to a real server over HTTP, for the end-to-end tests: its admin API, and get_account. */
import { bearer, send } from '../calls.js';
export const E2E_ADMIN_TOKEN = 'e2e-admin-token-0123456789';

export async function adminCall(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await send(baseUrl, E2E_ADMIN_TOKEN, method, `/admin/v1${path}`, body);
  return { status: res.status, body: res.json() };
}

/** A plan whose enrich windows are all `limit`, search windows large. */
export function planWithLimit(limit: number) {
  return {
    unlimited: false,
    limits: {
      enrich: { records: { '5h': limit, '1w': limit }, requests: { '5h': limit } },
      search: { records: { '5h': 1_000_000, '1w': 1_000_000 }, requests: { '5h': 1_000_000 } },
    },
  };
}

/** `POST /api/v1/tools/get_account` with `key`. */
export function getAccount(baseUrl: string, key: string): Promise<Response> {
  return fetch(`${baseUrl}/api/v1/tools/get_account`, {
    method: 'POST',
    headers: { authorization: bearer(key) },
  });
}

/** A new account (10 tokens, on `plan` or the default) and one key for it, through the admin API. */
export async function accountWithKey(baseUrl: string, plan?: string): Promise<{ id: string; key: string }> {
  const account = await adminCall(baseUrl, 'POST', '/accounts', {
    name: 'Acme',
    tokens: 10,
    ...(plan ? { plan } : {}),
  });
  if (account.status !== 201) throw new Error(`account: ${account.status} ${JSON.stringify(account.body)}`);
  const key = await adminCall(baseUrl, 'POST', `/accounts/${account.body.id}/keys`, {});
  if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
  return { id: account.body.id, key: key.body.key };
}
