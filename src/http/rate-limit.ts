/**
 * @module Rate limits, per server process, in sliding windows (domain/rate-limit.ts): each API key
 * may make TOOLGATE_RATE_LIMIT requests per second; each client address may fail authentication
 * TOOLGATE_AUTH_FAILURE_LIMIT times per minute on the tools API, and present a wrong admin token
 * ADMIN_FAILURES_PER_MINUTE times (or that limit, if lower), before it is refused outright (so
 * neither keys nor the admin token can be guessed at speed). Every tool response says where it
 * stands in RateLimit-Policy / RateLimit headers (IETF httpapi draft).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/api-error.js';
import type { Clock } from '../domain/clock.js';
import { type LimitState, SlidingWindowLimiter } from '../domain/rate-limit.js';
import { type Metrics, NO_METRICS } from '../metrics/metrics.js';
import type { SharedKeyLimiter } from './shared-rate-limit.js';

export interface RateLimitOptions {
  /** Requests per second per API key; 0 turns the limit off. */
  perKeyPerSecond: number;
  /** Failed authentications per minute per client address; 0 turns the limit off. */
  authFailuresPerMinute: number;
  clock: Clock;
  /** The per-key limit shared by every server (TOOLGATE_REDIS_URL); none: each server counts its own. */
  shared?: SharedKeyLimiter;
}

const KEY_POLICY = 'per-key';
const AUTH_POLICY = 'auth-failures';
const ADMIN_POLICY = 'admin-auth-failures';
/** Wrong admin tokens an address may present in a minute: the token opens everything. */
export const ADMIN_FAILURES_PER_MINUTE = 20;

/** The limit's RateLimit-Policy header, the same for every answer: made once. */
function policyHeader(name: string, limit: number, windowSeconds: number): string {
  return `"${name}";q=${limit};w=${windowSeconds}`;
}

/** Where the caller stands: the RateLimit header. */
function stateHeader(name: string, s: LimitState): string {
  return `"${name}";r=${s.remaining};t=${s.resetSeconds}`;
}

function advertise(reply: FastifyReply, policy: string, state: string): void {
  reply.header('ratelimit-policy', policy);
  reply.header('ratelimit', state);
}

/** How many of the per-key limiter's RateLimit headers are kept, one per `remaining` from 0. */
const KEPT_STATES = 1024;

function refuse(s: LimitState, message: string, headers: Record<string, string> = {}): ApiError {
  return new ApiError(
    'rate_limited',
    message,
    { retry_after: s.resetSeconds },
    { ...headers, 'retry-after': String(s.resetSeconds) },
  );
}

/** Throws the refusal when the address has failed too often (most of the time none has: then not even the address is looked up). */
function failedTooOften(
  failures: SlidingWindowLimiter | undefined,
  request: FastifyRequest,
  policy: string,
  name: string,
  metrics: Metrics,
): void {
  if (!failures?.anyFull()) return;
  const s = failures.peek(request.ip);
  if (s.allowed) return;
  // Wrong admin tokens are failed authentications too: one metric for both.
  metrics.rateLimited('auth-failures');
  throw refuse(s, 'Too many failed authentications from this address; wait before trying again.', {
    'ratelimit-policy': policy,
    ratelimit: stateHeader(name, s),
  });
}

export class RateLimits {
  private readonly perKey: SlidingWindowLimiter | undefined;
  private readonly perKeyPolicy: string;
  /**
   * The per-key RateLimit headers already made, by `remaining`, for the one-second window, where
   * `t` is always 1. Made once each rather than per request, and each the same string every time,
   * which Node's header validation checks on its fast path after the first (a freshly joined string
   * is flattened in V8's runtime first).
   */
  private readonly perKeyStates: string[] = [];
  private readonly authFailures: SlidingWindowLimiter | undefined;
  private readonly authPolicy: string;
  private readonly adminFailures: SlidingWindowLimiter | undefined;
  private readonly adminPolicy: string;
  private readonly shared: SharedKeyLimiter | undefined;

  constructor(
    options: RateLimitOptions,
    private readonly metrics: Metrics = NO_METRICS,
  ) {
    if (options.perKeyPerSecond > 0)
      this.perKey = new SlidingWindowLimiter(options.perKeyPerSecond, 1, options.clock);
    this.perKeyPolicy = policyHeader(KEY_POLICY, options.perKeyPerSecond, 1);
    if (options.perKeyPerSecond > 0) this.shared = options.shared;
    const adminLimit = Math.min(ADMIN_FAILURES_PER_MINUTE, options.authFailuresPerMinute);
    if (options.authFailuresPerMinute > 0) {
      this.authFailures = new SlidingWindowLimiter(options.authFailuresPerMinute, 60, options.clock);
      this.adminFailures = new SlidingWindowLimiter(adminLimit, 60, options.clock);
    }
    this.authPolicy = policyHeader(AUTH_POLICY, options.authFailuresPerMinute, 60);
    this.adminPolicy = policyHeader(ADMIN_POLICY, adminLimit, 60);
  }

  /**
   * Before authentication: an address that failed too often is refused, whatever key it sends now.
   * The refusal carries the address's RateLimit headers; an allowed request gets the ones of
   * whichever limit applies next (the key's, or the address's again if authentication fails).
   */
  beforeAuth(request: FastifyRequest): void {
    failedTooOften(this.authFailures, request, this.authPolicy, AUTH_POLICY, this.metrics);
  }

  /** A failed authentication counts against the address. */
  authFailed(request: FastifyRequest, reply: FastifyReply): void {
    if (!this.authFailures) return;
    advertise(reply, this.authPolicy, stateHeader(AUTH_POLICY, this.authFailures.record(request.ip)));
  }

  /** Before the admin token is compared: an address that presented wrong ones too often is refused, whatever it presents now. */
  beforeAdminAuth(request: FastifyRequest): void {
    failedTooOften(this.adminFailures, request, this.adminPolicy, ADMIN_POLICY, this.metrics);
  }

  /** A wrong admin token counts against the address. */
  adminAuthFailed(request: FastifyRequest, reply: FastifyReply): void {
    if (!this.adminFailures) return;
    advertise(reply, this.adminPolicy, stateHeader(ADMIN_POLICY, this.adminFailures.record(request.ip)));
  }

  /** The per-key RateLimit header for `s`: kept and reused for the one-second window's values. */
  private perKeyState(s: LimitState): string {
    if (s.resetSeconds !== 1 || s.remaining >= KEPT_STATES) return stateHeader(KEY_POLICY, s);
    let header = this.perKeyStates[s.remaining];
    if (header === undefined) {
      header = stateHeader(KEY_POLICY, s);
      this.perKeyStates[s.remaining] = header;
    }
    return header;
  }

  /**
   * `n` more requests of the key's budget at once (the further messages of a batch): the refusal
   * if the budget does not hold them all, else null.
   */
  takeMore(keyId: string, n: number): ApiError | null | Promise<ApiError | null> {
    if (!this.perKey) return null;
    if (this.shared) {
      const s = this.shared.hit(keyId, n);
      if (s instanceof Promise) return s.then((state) => this.judgeMore(keyId, n, state));
      return this.judgeMore(keyId, n, s);
    }
    return this.localMore(keyId, n);
  }

  private judgeMore(keyId: string, n: number, s: LimitState | null): ApiError | null {
    if (s === null) return this.localMore(keyId, n);
    return s.allowed ? null : this.refused(s);
  }

  private localMore(keyId: string, n: number): ApiError | null {
    const s = this.perKey!.take(keyId, n);
    return s.allowed ? null : this.refused(s);
  }

  /**
   * After authentication: the key's own budget for this second. With a shared limit the answer may
   * be a promise (a round trip to Redis, unless the key was refused in this window already).
   */
  afterAuth(keyId: string, reply: FastifyReply): void | Promise<void> {
    if (!this.perKey) return;
    if (this.shared) {
      const s = this.shared.hit(keyId);
      if (s instanceof Promise) return s.then((state) => this.judge(keyId, state, reply));
      return this.judge(keyId, s, reply);
    }
    this.judge(keyId, this.perKey.take(keyId), reply);
  }

  /** Advertises where the key stands and throws its refusal; a shared limit that cannot say: this server's own. */
  private judge(keyId: string, state: LimitState | null, reply: FastifyReply): void {
    const s = state ?? this.perKey!.take(keyId);
    advertise(reply, this.perKeyPolicy, this.perKeyState(s));
    if (!s.allowed) throw this.refused(s);
  }

  private refused(s: LimitState): ApiError {
    this.metrics.rateLimited('per-key');
    return refuse(s, `Too many requests for this API key: at most ${s.limit} per second.`);
  }
}
