import type { AppHarness } from '../helpers.js';
import { ADMIN_TOKEN } from '../helpers.js';

/** Calls the admin API with the admin token. */
export function admin(h: AppHarness) {
  const send = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    h.app.inject({
      method,
      url: `/admin/v1${url}`,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });
  return {
    get: (url: string) => send('GET', url),
    post: (url: string, body: unknown = {}) => send('POST', url, body),
    patch: (url: string, body: unknown) => send('PATCH', url, body),
    put: (url: string, body: unknown) => send('PUT', url, body),
    del: (url: string) => send('DELETE', url),
  };
}
