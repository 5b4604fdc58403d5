/**
 * @module Authentication by API key, as an onRequest hook shared by both front doors (the tools
 * route and MCP): the key, then its rate limit, before the body is even read, so a refused request
 * costs little; one budget per key whichever door it comes through.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ApiError } from '../domain/api-error.js';
import type { Result } from '../domain/errors.js';
import type { Services } from '../service/index.js';
import type { AuthenticatedKey } from '../service/keys.js';
import type { Caller } from '../tools/call.js';
import { bearer } from './auth.js';
import type { RateLimits } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthenticatedKey | null;
    /** A rate-limit refusal the door answers in its own way (MCP: as a tool result), when deferred. */
    refusal: ApiError | null;
  }
}

export interface KeyAuthOptions {
  /** Sent with every 401 as WWW-Authenticate (MCP clients look for `Bearer`); a function when it names a URL known later. */
  challenge?: string | (() => string);
  /** Keep a rate-limit refusal on the request instead of answering it here. */
  deferRateLimit?: boolean;
}

export type KeyAuthHook = (
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
) => void;

export function keyAuthentication(
  services: Services,
  limits: RateLimits | undefined,
  opts: KeyAuthOptions = {},
): KeyAuthHook {
  const refuse = (err: unknown): Error => {
    if (
      opts.challenge &&
      err instanceof ApiError &&
      (err.code === 'missing_api_key' || err.code === 'invalid_api_key')
    ) {
      const challenge = typeof opts.challenge === 'function' ? opts.challenge() : opts.challenge;
      return new ApiError(err.code, err.message, err.details, {
        ...err.headers,
        // RFC 6750: a credential presented and refused says so; none presented gets no error.
        'www-authenticate': err.code === 'invalid_api_key' ? invalidToken(challenge) : challenge,
      });
    }
    return err as Error;
  };
  // A callback hook, so that a key the read cache knows is settled without a promise.
  const settle = (
    request: FastifyRequest,
    reply: FastifyReply,
    result: Result<AuthenticatedKey>,
    done: HookHandlerDoneFunction,
  ) => {
    try {
      if (!result.ok) {
        limits?.authFailed(request, reply);
        throw ApiError.from(result.error);
      }
      request.auth = result.value;
      try {
        const limited = limits?.afterAuth(result.value.keyId, reply);
        // A shared limit asks Redis: settled when it answers (the local limit is settled here).
        if (limited instanceof Promise) {
          limited.then(
            () => done(),
            (err) => limitRefused(request, err, done),
          );
          return;
        }
      } catch (err) {
        limitRefused(request, err, done);
        return;
      }
    } catch (err) {
      done(refuse(err));
      return;
    }
    done();
  };
  /** A rate-limit refusal: kept on the request for the door to answer when deferred, else answered now. */
  const limitRefused = (request: FastifyRequest, err: unknown, done: HookHandlerDoneFunction) => {
    if (opts.deferRateLimit && err instanceof ApiError && err.code === 'rate_limited') {
      request.refusal = err;
      done();
      return;
    }
    done(refuse(err));
  };
  return (request, reply, done) => {
    let result: Result<AuthenticatedKey> | Promise<Result<AuthenticatedKey>>;
    try {
      limits?.beforeAuth(request);
      result = services.keys.authenticate(bearer(request.headers.authorization));
    } catch (err) {
      done(refuse(err));
      return;
    }
    if (result instanceof Promise) result.then((r) => settle(request, reply, r, done), done);
    else settle(request, reply, result, done);
  };
}

/** Who calls, as key authentication left it on the request: the one Caller both doors hand the tool call. */
export function callerOf(request: FastifyRequest): Caller {
  const auth = request.auth!;
  return {
    accountId: auth.accountId,
    keyId: auth.keyId,
    requestId: request.id,
    log: request.log,
    startedAt: request.startedAt,
    refusal: request.refusal ?? null,
  };
}

/** `Bearer error="invalid_token"`, before the challenge's own parameters (resource_metadata). */
export function invalidToken(challenge: string): string {
  const params = challenge.replace(/^Bearer\s*/, '');
  return params ? `Bearer error="invalid_token", ${params}` : 'Bearer error="invalid_token"';
}
