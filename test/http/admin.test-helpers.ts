import type { FastifyInstance } from 'fastify';
import { bearer } from '../calls.js';
import { ADMIN_TOKEN } from '../helpers.js';

/** Calls the admin API with an admin token (the harness's single token unless told). */
export function admin(h: { app: FastifyInstance }, token: string = ADMIN_TOKEN) {
  const send = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    h.app.inject({
      method,
      url: `/admin/v1${url}`,
      headers: {
        authorization: bearer(token),
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
