/**
 * @module Configuration: the environment, parsed and validated once by a schema, with a clear message
 * per problem. The schema is checked by ajv, which every process has loaded anyway (the catalogue's
 * schemas), not TypeBox: loading TypeBox's checker took about half a second of each CLI command.
 */

import { Ajv } from 'ajv';
import { type DatabaseConfig, parseDatabaseUrl, redactUrl, withSqliteWriter } from './config-database.js';
import { KEY_PREFIX_PATTERN } from './domain/api-keys.js';
import { normalOrigin } from './domain/origins.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogFormat = 'pretty' | 'json';

/** The variables toolgate reads (every one optional, a string), as JSON Schema: checked by ajv. */
const ENV_PROPERTIES = {
  TOOLGATE_DATABASE_URL: { type: 'string', pattern: '^(sqlite:.+|postgres(ql)?://.+)$' },
  HOST: { type: 'string', minLength: 1 },
  PORT: { type: 'string', pattern: '^[0-9]{1,5}$' },
  TOOLGATE_ADMIN_TOKEN: { type: 'string', minLength: 16 },
  TOOLGATE_KEY_PREFIX: { type: 'string', pattern: KEY_PREFIX_PATTERN.source },
  TOOLGATE_KEY_SECRET: { type: 'string', minLength: 32 },
  TOOLGATE_RATE_LIMIT: { type: 'string', pattern: '^[0-9]{1,9}$' },
  TOOLGATE_AUTH_FAILURE_LIMIT: { type: 'string', pattern: '^[0-9]{1,9}$' },
  TOOLGATE_USAGE_RETENTION_DAYS: { type: 'string', pattern: '^[1-9][0-9]{0,4}$' },
  TOOLGATE_UPSTREAM_CONNECTIONS: { type: 'string', pattern: '^[1-9][0-9]{0,3}$' },
  TOOLGATE_UPSTREAM_ENV: {
    type: 'string',
    pattern: '^ *[A-Za-z_][A-Za-z0-9_]* *(, *[A-Za-z_][A-Za-z0-9_]* *)*$',
  },
  TOOLGATE_REDIS_URL: { type: 'string', pattern: '^rediss?://.+' },
  TOOLGATE_REDIS_FAIL: { type: 'string', enum: ['open', 'closed'] },
  TOOLGATE_METRICS_PORT: { type: 'string', pattern: '^[0-9]{1,5}$' },
  TOOLGATE_WEBHOOK_ALLOW_PRIVATE: { type: 'string', enum: ['true', 'false'] },
  TOOLGATE_WEBHOOK_TIMEOUT_MS: { type: 'string', pattern: '^[1-9][0-9]{2,4}$' },
  TOOLGATE_TRUST_PROXY: { type: 'string', pattern: '^(true|false|[0-9a-fA-F.:/]+(,[0-9a-fA-F.:/]+)*)$' },
  TOOLGATE_ALLOWED_ORIGINS: { type: 'string' },
  TOOLGATE_DATABASE_POOL_SIZE: { type: 'string', pattern: '^[1-9][0-9]{0,2}$' },
  TOOLGATE_DATABASE_SCHEMA: { type: 'string', pattern: '^[a-z_][a-z0-9_]{0,62}$' },
  TOOLGATE_DATABASE_TIMEOUT_MS: { type: 'string', pattern: '^[1-9][0-9]{2,5}$' },
  TOOLGATE_CONSOLE: { type: 'string', enum: ['on', 'off'] },
  TOOLGATE_CONSOLE_SIGNUP: { type: 'string', enum: ['open', 'closed'] },
  TOOLGATE_CONSOLE_SIGNUP_PLAN: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' },
  TOOLGATE_PUBLIC_URL: { type: 'string', pattern: '^https?://[^/?#@\\s]+(/[^?#\\s]*)?$' },
  TOOLGATE_SMTP_URL: { type: 'string', pattern: '^smtps?://[^\\s]+$' },
  TOOLGATE_SMTP_FROM: { type: 'string', minLength: 3, maxLength: 320 },
  TOOLGATE_STRIPE_SECRET_KEY: { type: 'string', pattern: '^(sk|rk)_[A-Za-z0-9_]{8,}$' },
  TOOLGATE_STRIPE_WEBHOOK_SECRET: { type: 'string', pattern: '^whsec_[A-Za-z0-9+/=_]{8,}$' },
  TOOLGATE_STRIPE_API_URL: { type: 'string', pattern: '^https?://[^/?#@\\s]+/?$' },
  TOOLGATE_STRIPE_FALLBACK_PLAN: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' },
  TOOLGATE_STRIPE_UNPAID: { type: 'string', enum: ['fallback', 'suspend'] },
  TOOLGATE_BRAND_NAME: {
    type: 'string',
    minLength: 1,
    maxLength: 60,
    pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069<>]+$',
  },
  TOOLGATE_BRAND_LOGO: { type: 'string', minLength: 1 },
  TOOLGATE_BRAND_COLOR: { type: 'string', pattern: '^#[0-9a-fA-F]{6}$' },
  TOOLGATE_BRAND_SUPPORT: {
    type: 'string',
    pattern: '^([^\\s@<>]+@[^\\s@<>]+\\.[^\\s@<>]+|https://[^\\s<>"]+)$',
  },
  LOG_LEVEL: { type: 'string', enum: [...LOG_LEVELS] },
  TOOLGATE_LOG_FORMAT: { type: 'string', enum: ['pretty', 'json'] },
  TOOLGATE_SQLITE_WRITER: { type: 'string', enum: ['thread', 'loop'] },
  NODE_ENV: { type: 'string' },
} as const;
const checkEnv = new Ajv({ allErrors: true, strict: true }).compile({
  type: 'object',
  properties: ENV_PROPERTIES,
});
type Env = { [K in Exclude<keyof typeof ENV_PROPERTIES, 'LOG_LEVEL'>]?: string } & {
  LOG_LEVEL?: (typeof LOG_LEVELS)[number];
};

const HINTS: Record<keyof Env, string> = {
  TOOLGATE_DATABASE_URL:
    'must be sqlite:<path> (for example sqlite:./data/toolgate.db) or postgres://user@host:port/db',
  HOST: 'must be a host name or address to listen on, for example 127.0.0.1 or 0.0.0.0',
  PORT: 'must be a port number from 0 to 65535',
  TOOLGATE_ADMIN_TOKEN:
    'must be a token of at least 16 characters, or name:token pairs separated by commas (unset it to turn the admin API off)',
  TOOLGATE_KEY_PREFIX: 'must be 1-16 lower-case letters or digits, starting with a letter (no underscore)',
  TOOLGATE_KEY_SECRET:
    'must be at least 32 characters (for example: openssl rand -hex 32); to rotate, list the new one first: new,old',
  TOOLGATE_RATE_LIMIT: 'must be a whole number of requests per second per key (0 turns the limit off)',
  TOOLGATE_AUTH_FAILURE_LIMIT:
    'must be a whole number of failed authentications per minute per client address (0 turns the limit off)',
  TOOLGATE_USAGE_RETENTION_DAYS: 'must be a whole number of days from 1 to 99999 (default 400)',
  TOOLGATE_UPSTREAM_CONNECTIONS:
    'must be a whole number from 1 to 9999: connections kept open to each upstream origin (default 128)',
  TOOLGATE_UPSTREAM_ENV:
    "must be environment variable names separated by commas (for example EXAMPLE_UPSTREAM_TOKEN,CRM_TOKEN): the only ones a catalogue tool's header placeholders may read (never toolgate's own: TOOLGATE_*, PG*, database and Redis variables)",
  TOOLGATE_REDIS_URL:
    'must be redis://[user:password@]host:port[/db] or rediss:// (TLS): the Redis every server shares the per-key rate limit through',
  TOOLGATE_REDIS_FAIL:
    'must be open (serve, each server counting alone, while Redis is unreachable; the default) or closed (refuse with 503)',
  TOOLGATE_METRICS_PORT:
    'must be a port number from 0 to 65535 for /metrics (Prometheus), on HOST; unset: no metrics',
  TOOLGATE_WEBHOOK_ALLOW_PRIVATE:
    'must be true or false: whether webhook endpoints may be loopback or private addresses (default false)',
  TOOLGATE_WEBHOOK_TIMEOUT_MS:
    'must be a whole number of milliseconds from 100 to 99999: how long an endpoint has to answer (default 10000)',
  TOOLGATE_TRUST_PROXY:
    'must be true, false, or the addresses/CIDRs of your load balancers separated by commas (whose X-Forwarded-For is believed)',
  TOOLGATE_ALLOWED_ORIGINS:
    "must be origins separated by commas, each scheme://host[:port] with no path (for example https://app.example.com): the browser origins, besides the server's own, that may call /mcp",
  TOOLGATE_DATABASE_POOL_SIZE: 'must be a whole number of connections from 1 to 999 (PostgreSQL only)',
  TOOLGATE_DATABASE_SCHEMA:
    'must be a lower-case schema name: letters, digits and underscores (PostgreSQL only)',
  TOOLGATE_DATABASE_TIMEOUT_MS: 'must be a whole number of milliseconds from 100 to 999999 (PostgreSQL only)',
  TOOLGATE_CONSOLE: "must be on (the default: the customers' console at /console) or off",
  TOOLGATE_CONSOLE_SIGNUP:
    'must be open (an unknown email that follows its sign-in link gets a new account) or closed (the default)',
  TOOLGATE_CONSOLE_SIGNUP_PLAN: 'must be a plan id (lower-case letters, digits, "_" and "-"); default free',
  TOOLGATE_PUBLIC_URL:
    'must be the address people and agents reach this server at, http(s)://host[:port][/path] with no query (for example https://tools.example.com)',
  TOOLGATE_SMTP_URL:
    "must be smtp://[user:password@]host:port or smtps:// (TLS): where the console's sign-in links are mailed through",
  TOOLGATE_SMTP_FROM:
    'must be the sender of the console\'s mails, for example "toolgate <no-reply@example.com>"',
  TOOLGATE_STRIPE_SECRET_KEY:
    'must be a Stripe secret or restricted key (sk_live_…, sk_test_…, rk_…): payments are off without one',
  TOOLGATE_STRIPE_WEBHOOK_SECRET:
    "must be the signing secret of the Stripe webhook endpoint for /webhooks/stripe (whsec_…, in Stripe's Dashboard under Developers > Webhooks)",
  TOOLGATE_STRIPE_API_URL:
    'must be the base URL of a Stripe-compatible API, scheme://host[:port] with no path (stripe-mock, a test server); unset: Stripe itself',
  TOOLGATE_STRIPE_FALLBACK_PLAN:
    'must be a plan id (lower-case letters, digits, "_" and "-"): where an account goes when its subscription ends; default free',
  TOOLGATE_STRIPE_UNPAID:
    'must be fallback (an unpaid subscription moves its account to the fallback plan; the default) or suspend',
  TOOLGATE_BRAND_NAME:
    'must be the name your customers know your product by, 1-60 characters without control characters or < >',
  TOOLGATE_BRAND_LOGO: 'must be the path of an SVG or PNG file (at most 256 KiB) that the console shows',
  TOOLGATE_BRAND_COLOR: 'must be an accent colour as #rrggbb, for example #0f766e',
  TOOLGATE_BRAND_SUPPORT: 'must be an email address or an https:// URL where customers get help',
  LOG_LEVEL: `must be one of ${LOG_LEVELS.join(', ')}`,
  TOOLGATE_LOG_FORMAT:
    'must be pretty (readable lines; the default on a terminal outside production) or json (one object per line; the default otherwise)',
  TOOLGATE_SQLITE_WRITER:
    'must be loop (consumptions written on the event loop; the default) or thread (by a thread beside the event loop)',
  NODE_ENV: 'must be a string',
};

function parseTrustProxy(value: string | undefined): boolean | string[] {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  return value.split(',');
}

/** Every variable toolgate's configuration reads (none of which a catalogue may name). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(HINTS);

export interface AdminToken {
  /** Who acts, in the audit trail: `admin:<name>`. */
  name: string;
  token: string;
}

const NAMED_TOKEN = /^([a-z0-9_-]{1,32}):(.+)$/;

/**
 * `TOOLGATE_ADMIN_TOKEN`: one token (named "admin"), or `name:token` pairs separated by commas,
 * one per operator or system, so the audit trail says who acted.
 */
export function parseAdminTokens(value: string | undefined): AdminToken[] {
  if (!value) return [];
  const named = value.includes(',') || NAMED_TOKEN.test(value);
  const tokens = named
    ? value.split(',').map((part) => {
        const m = NAMED_TOKEN.exec(part.trim());
        if (!m) throw new Error('must list name:token pairs, names of 1-32 characters a-z, 0-9, "_" or "-"');
        return { name: m[1]!, token: m[2]! };
      })
    : [{ name: 'admin', token: value }];
  if (tokens.some((t) => t.token.length < 16)) throw new Error('tokens must be at least 16 characters each');
  if (new Set(tokens.map((t) => t.name)).size !== tokens.length) throw new Error('names must be distinct');
  return tokens;
}

export interface Config {
  database: DatabaseConfig;
  host: string;
  port: number;
  /** Who may use the admin API, by name (audited); empty: the admin API is off. */
  adminTokens: AdminToken[];
  keyPrefix: string;
  /**
   * HMAC secrets for key digests, the current one first, older ones after it while rotating.
   * Empty: not given; for SQLite one is generated into the data directory (see resolveKeySecrets).
   */
  keySecrets: string[];
  rateLimit: number;
  authFailureLimit: number;
  /** Days of usage history kept. */
  usageRetentionDays: number;
  /** Most connections kept open to one upstream origin (catalogue tools). */
  upstreamConnections: number;
  /** TOOLGATE_UPSTREAM_ENV: the variables catalogue header placeholders may name (toolgate's own never). */
  upstreamEnv: string[];
  /** The Redis the per-key rate limit is shared through; undefined: each server counts alone. */
  redisUrl: string | undefined;
  /** Redis unreachable: serve under each server's own limit (true) or refuse with 503. */
  redisFailOpen: boolean;
  /** Where /metrics listens (on HOST); undefined: no metrics. */
  metricsPort: number | undefined;
  /** Whether webhook endpoints may be loopback or private addresses (tests, closed networks). */
  webhookAllowPrivate: boolean;
  /** How long a webhook endpoint has to answer with a 2xx. */
  webhookTimeoutMs: number;
  /** Whose X-Forwarded-For names the client: false (nobody), true (anyone: only behind a proxy), or these addresses. */
  trustProxy: boolean | string[];
  /** TOOLGATE_ALLOWED_ORIGINS, normalised: the browser origins besides the server's own that may call /mcp. */
  allowedOrigins: string[];
  /** TOOLGATE_PUBLIC_URL without a trailing slash; undefined: http://<host>:<port>. */
  publicUrl: string | undefined;
  /** The customers' console (TOOLGATE_CONSOLE*, TOOLGATE_SMTP_*). */
  console: ConsoleConfig;
  /** TOOLGATE_BRAND_*: what customers see instead of toolgate (the logo a path, read at start). */
  brand: { name: string; logoFile: string | undefined; color: string | null; support: string | null };
  /** Money through Stripe (TOOLGATE_STRIPE_*); undefined without a secret key: payments are off. */
  payments: PaymentsConfig | undefined;
  logLevel: (typeof LOG_LEVELS)[number];
  /** TOOLGATE_LOG_FORMAT, or pretty when standard output is a terminal outside production. */
  logFormat: LogFormat;
  production: boolean;
}

export interface ConsoleConfig {
  enabled: boolean;
  signup: 'open' | 'closed';
  signupPlan: string;
  smtpUrl: string | undefined;
  smtpFrom: string | undefined;
}

export interface PaymentsConfig {
  secretKey: string;
  /** Without it no event can be verified: /webhooks/stripe refuses them all (a start-up warning says so). */
  webhookSecret: string | undefined;
  apiUrl: string | undefined;
  fallbackPlan: string;
  unpaid: 'fallback' | 'suspend';
}

/** TOOLGATE_STRIPE_*: payments, when a secret key is given. */
function paymentsConfig(e: Env): PaymentsConfig | undefined {
  if (!e.TOOLGATE_STRIPE_SECRET_KEY) return undefined;
  return {
    secretKey: e.TOOLGATE_STRIPE_SECRET_KEY,
    webhookSecret: e.TOOLGATE_STRIPE_WEBHOOK_SECRET,
    apiUrl: e.TOOLGATE_STRIPE_API_URL?.replace(/\/+$/, ''),
    fallbackPlan: e.TOOLGATE_STRIPE_FALLBACK_PLAN ?? 'free',
    unpaid: e.TOOLGATE_STRIPE_UNPAID === 'suspend' ? 'suspend' : 'fallback',
  };
}

export { type DatabaseConfig, redactUrl };

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** What no schema says of the secrets: each rotated key secret long enough; payments' two secrets together. */
function checkSecrets(picked: Record<string, string>, problems: Map<string, string>): void {
  if (picked.TOOLGATE_KEY_SECRET?.split(',').some((k) => k.length < 32))
    problems.set(
      'TOOLGATE_KEY_SECRET',
      `TOOLGATE_KEY_SECRET ${HINTS.TOOLGATE_KEY_SECRET} (a listed secret is too short)`,
    );
  if (picked.TOOLGATE_STRIPE_WEBHOOK_SECRET && !picked.TOOLGATE_STRIPE_SECRET_KEY)
    problems.set(
      'TOOLGATE_STRIPE_SECRET_KEY',
      'TOOLGATE_STRIPE_WEBHOOK_SECRET is set but TOOLGATE_STRIPE_SECRET_KEY is not: payments need both (or neither)',
    );
}

/** `terminal`: whether standard output is a terminal (pretty logs by default there, outside production). */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  terminal = process.stdout.isTTY === true,
): Config {
  // Only our variables, and an empty value counts as unset.
  const picked: Record<string, string> = {};
  for (const name of Object.keys(HINTS)) {
    const v = env[name];
    if (v !== undefined && v !== '') picked[name] = v;
  }
  const problems = new Map<string, string>();
  if (!checkEnv(picked))
    for (const e of checkEnv.errors ?? []) {
      const name = e.instancePath.replace(/^\//, '') as keyof Env;
      if (name in HINTS) problems.set(name, `${name} ${HINTS[name]} (got "${redact(name, picked[name])}")`);
    }
  const port = Number(picked.PORT ?? '8080');
  if (!problems.has('PORT') && port > 65535)
    problems.set('PORT', `PORT ${HINTS.PORT} (got "${picked.PORT}")`);
  if (!problems.has('TOOLGATE_METRICS_PORT') && Number(picked.TOOLGATE_METRICS_PORT ?? 0) > 65535)
    problems.set(
      'TOOLGATE_METRICS_PORT',
      `TOOLGATE_METRICS_PORT ${HINTS.TOOLGATE_METRICS_PORT} (got "${picked.TOOLGATE_METRICS_PORT}")`,
    );
  if (!problems.has('TOOLGATE_ADMIN_TOKEN') && picked.TOOLGATE_ADMIN_TOKEN) {
    try {
      parseAdminTokens(picked.TOOLGATE_ADMIN_TOKEN);
    } catch (err) {
      problems.set('TOOLGATE_ADMIN_TOKEN', `TOOLGATE_ADMIN_TOKEN ${(err as Error).message}`);
    }
  }
  const allowedOrigins = (picked.TOOLGATE_ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  const notOrigin = allowedOrigins.find((o) => normalOrigin(o) === undefined);
  if (notOrigin !== undefined)
    problems.set(
      'TOOLGATE_ALLOWED_ORIGINS',
      `TOOLGATE_ALLOWED_ORIGINS ${HINTS.TOOLGATE_ALLOWED_ORIGINS} (got "${redactUrl(notOrigin)}")`,
    );
  checkSecrets(picked, problems);
  if (problems.size > 0)
    throw new ConfigError(`Invalid configuration:\n  - ${[...problems.values()].join('\n  - ')}`);
  const e = picked as Env;
  return {
    database: withSqliteWriter(
      parseDatabaseUrl(e.TOOLGATE_DATABASE_URL ?? 'sqlite:./data/toolgate.db', {
        poolSize: Number(e.TOOLGATE_DATABASE_POOL_SIZE ?? '10'),
        schema: e.TOOLGATE_DATABASE_SCHEMA ?? 'public',
        timeoutMs: Number(e.TOOLGATE_DATABASE_TIMEOUT_MS ?? '5000'),
      }),
      e.TOOLGATE_SQLITE_WRITER as 'thread' | 'loop' | undefined,
    ),
    host: e.HOST ?? '127.0.0.1',
    port,
    adminTokens: parseAdminTokens(e.TOOLGATE_ADMIN_TOKEN),
    keyPrefix: e.TOOLGATE_KEY_PREFIX ?? 'tg',
    keySecrets: e.TOOLGATE_KEY_SECRET ? e.TOOLGATE_KEY_SECRET.split(',') : [],
    rateLimit: Number(e.TOOLGATE_RATE_LIMIT ?? '100'),
    authFailureLimit: Number(e.TOOLGATE_AUTH_FAILURE_LIMIT ?? '30'),
    usageRetentionDays: Number(e.TOOLGATE_USAGE_RETENTION_DAYS ?? '400'),
    upstreamConnections: Number(e.TOOLGATE_UPSTREAM_CONNECTIONS ?? '128'),
    upstreamEnv: e.TOOLGATE_UPSTREAM_ENV ? e.TOOLGATE_UPSTREAM_ENV.split(',').map((name) => name.trim()) : [],
    redisUrl: e.TOOLGATE_REDIS_URL,
    redisFailOpen: e.TOOLGATE_REDIS_FAIL !== 'closed',
    metricsPort: e.TOOLGATE_METRICS_PORT === undefined ? undefined : Number(e.TOOLGATE_METRICS_PORT),
    webhookAllowPrivate: e.TOOLGATE_WEBHOOK_ALLOW_PRIVATE === 'true',
    webhookTimeoutMs: Number(e.TOOLGATE_WEBHOOK_TIMEOUT_MS ?? '10000'),
    trustProxy: parseTrustProxy(e.TOOLGATE_TRUST_PROXY),
    allowedOrigins: allowedOrigins.map((o) => normalOrigin(o)!),
    publicUrl: e.TOOLGATE_PUBLIC_URL?.replace(/\/+$/, ''),
    console: {
      enabled: e.TOOLGATE_CONSOLE !== 'off',
      signup: e.TOOLGATE_CONSOLE_SIGNUP === 'open' ? 'open' : 'closed',
      signupPlan: e.TOOLGATE_CONSOLE_SIGNUP_PLAN ?? 'free',
      smtpUrl: e.TOOLGATE_SMTP_URL,
      smtpFrom: e.TOOLGATE_SMTP_FROM,
    },
    payments: paymentsConfig(e),
    brand: {
      name: e.TOOLGATE_BRAND_NAME?.trim() || 'toolgate',
      logoFile: e.TOOLGATE_BRAND_LOGO,
      color: e.TOOLGATE_BRAND_COLOR?.toLowerCase() ?? null,
      support: e.TOOLGATE_BRAND_SUPPORT ?? null,
    },
    logLevel: e.LOG_LEVEL ?? 'info',
    logFormat:
      (e.TOOLGATE_LOG_FORMAT as LogFormat | undefined) ??
      (terminal && e.NODE_ENV !== 'production' ? 'pretty' : 'json'),
    production: e.NODE_ENV === 'production',
  };
}

const SECRET_VARIABLES = [
  'TOOLGATE_ADMIN_TOKEN',
  'TOOLGATE_KEY_SECRET',
  'TOOLGATE_STRIPE_SECRET_KEY',
  'TOOLGATE_STRIPE_WEBHOOK_SECRET',
];

function redact(name: string, value: string | undefined): string {
  if (value === undefined) return '';
  if (SECRET_VARIABLES.includes(name)) return `<${value.length} characters>`;
  // A database or Redis URL may carry a password.
  return redactUrl(value);
}
