/**
 * @module Strings no backend may be handed: NUL and unpaired UTF-16 surrogates, which PostgreSQL
 * cannot store (text refuses NUL, jsonb both) while SQLite would. Checked once, before validation,
 * over a request's decoded path parameters, query and JSON body (values and member names), so both
 * backends refuse the same requests with the same 400 naming the field.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ApiError } from '../domain/api-error.js';
import { isStorable, UNSTORABLE_REASON } from '../domain/storable.js';

const join = (at: string, member: string) => (at === '' ? member : `${at}.${member}`);

/**
 * The refusal for the first string in `value` (depth first, in member order) that cannot be
 * stored, naming where it is (`metering.records_pointer`, `events.1`); undefined when there is none.
 */
export function unstorableIn(value: unknown, at: string, whole: string): string | undefined {
  if (typeof value === 'string') {
    return isStorable(value) ? undefined : `Invalid arguments: ${at} ${UNSTORABLE_REASON}.`;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorableIn(value[i], join(at, String(i)), whole);
      if (found) return found;
    }
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  for (const [member, inner] of Object.entries(value)) {
    if (!isStorable(member)) {
      return `Invalid arguments: ${at === '' ? whole : at} must not have a member name containing NUL or an unpaired surrogate.`;
    }
    const found = unstorableIn(inner, join(at, member), whole);
    if (found) return found;
  }
  return undefined;
}

/**
 * The query parameter whose name or value is not UTF-8 once percent-decoded (`%ED%A0%80`, an
 * encoded surrogate, or `%FF`): Fastify's parser keeps such a value as the raw text, which would
 * be taken as something the client did not send.
 */
function undecodableQuery(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q < 0 || !url.includes('%', q)) return undefined;
  for (const pair of url.slice(q + 1).split('&')) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    try {
      decodeURIComponent(pair.replaceAll('+', ' '));
    } catch {
      let field = 'a query parameter name';
      try {
        field = decodeURIComponent(name.replaceAll('+', ' '));
      } catch {}
      return `Invalid arguments: ${field} is not percent-encoded UTF-8.`;
    }
  }
  return undefined;
}

/** A preValidation hook: a request holding a string no backend may be handed is 400, whatever its route. */
export function refuseUnstorable(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  const problem =
    unstorableIn(request.params, '', 'the path') ??
    undecodableQuery(request.url) ??
    unstorableIn(request.query, '', 'the query') ??
    unstorableIn(request.body, '', 'the body');
  done(problem === undefined ? undefined : new ApiError('invalid_arguments', problem));
}
