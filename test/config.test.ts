import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseAdminTokens } from '../src/config.js';
import { unknownVariableWarnings } from '../src/config-warnings.js';

describe('configuration', () => {
  it('has working defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      adminTokens: [],
      keyPrefix: 'tg',
      keySecrets: [],
      rateLimit: 100,
      usageRetentionDays: 400,
      upstreamConnections: 128,
    });
    expect(c.database).toMatchObject({ kind: 'sqlite' });
  });

  it('logs pretty by default on a terminal outside production, JSON otherwise, or as TOOLGATE_LOG_FORMAT says', () => {
    expect(loadConfig({}, true).logFormat).toBe('pretty');
    expect(loadConfig({}, false).logFormat).toBe('json');
    expect(loadConfig({ NODE_ENV: 'production' }, true).logFormat).toBe('json');
    expect(loadConfig({ TOOLGATE_LOG_FORMAT: 'json' }, true).logFormat).toBe('json');
    expect(loadConfig({ TOOLGATE_LOG_FORMAT: 'pretty', NODE_ENV: 'production' }, false).logFormat).toBe(
      'pretty',
    );
    expect(() => loadConfig({ TOOLGATE_LOG_FORMAT: 'text' })).toThrow(
      /TOOLGATE_LOG_FORMAT must be pretty .* or json .* \(got "text"\)/,
    );
  });

  it('reads the usage retention and the upstream connections, and refuses what is not a count', () => {
    const c = loadConfig({ TOOLGATE_USAGE_RETENTION_DAYS: '30', TOOLGATE_UPSTREAM_CONNECTIONS: '16' });
    expect(c).toMatchObject({ usageRetentionDays: 30, upstreamConnections: 16 });
    expect(() => loadConfig({ TOOLGATE_USAGE_RETENTION_DAYS: '0' })).toThrow(/TOOLGATE_USAGE_RETENTION_DAYS/);
    expect(() => loadConfig({ TOOLGATE_UPSTREAM_CONNECTIONS: 'many' })).toThrow(
      /TOOLGATE_UPSTREAM_CONNECTIONS/,
    );
  });

  it('reads the metrics port and the webhook settings, with defaults, and refuses bad values', () => {
    expect(loadConfig({})).toMatchObject({
      metricsPort: undefined,
      webhookAllowPrivate: false,
      webhookTimeoutMs: 10_000,
    });
    expect(
      loadConfig({
        TOOLGATE_METRICS_PORT: '9464',
        TOOLGATE_WEBHOOK_ALLOW_PRIVATE: 'true',
        TOOLGATE_WEBHOOK_TIMEOUT_MS: '2500',
      }),
    ).toMatchObject({ metricsPort: 9464, webhookAllowPrivate: true, webhookTimeoutMs: 2500 });
    expect(() => loadConfig({ TOOLGATE_METRICS_PORT: '70000' })).toThrow(
      /TOOLGATE_METRICS_PORT must be a port number/,
    );
    expect(() => loadConfig({ TOOLGATE_METRICS_PORT: 'metrics' })).toThrow(/TOOLGATE_METRICS_PORT/);
    expect(() => loadConfig({ TOOLGATE_WEBHOOK_ALLOW_PRIVATE: 'yes' })).toThrow(
      /TOOLGATE_WEBHOOK_ALLOW_PRIVATE must be true or false/,
    );
    expect(() => loadConfig({ TOOLGATE_WEBHOOK_TIMEOUT_MS: '50' })).toThrow(/TOOLGATE_WEBHOOK_TIMEOUT_MS/);
  });

  it('turns payments on with a Stripe secret key, and refuses half a setup without echoing a secret', () => {
    expect(loadConfig({}).payments).toBeUndefined();
    expect(
      loadConfig({
        TOOLGATE_STRIPE_SECRET_KEY: 'sk_test_0123456789abcdef',
        TOOLGATE_STRIPE_WEBHOOK_SECRET: 'whsec_0123456789abcdef',
        TOOLGATE_STRIPE_API_URL: 'http://127.0.0.1:12111/',
        TOOLGATE_STRIPE_UNPAID: 'suspend',
      }).payments,
    ).toEqual({
      secretKey: 'sk_test_0123456789abcdef',
      webhookSecret: 'whsec_0123456789abcdef',
      apiUrl: 'http://127.0.0.1:12111',
      fallbackPlan: 'free',
      unpaid: 'suspend',
    });
    expect(() => loadConfig({ TOOLGATE_STRIPE_WEBHOOK_SECRET: 'whsec_0123456789abcdef' })).toThrow(
      'TOOLGATE_STRIPE_WEBHOOK_SECRET is set but TOOLGATE_STRIPE_SECRET_KEY is not',
    );
    let message = '';
    try {
      loadConfig({
        TOOLGATE_STRIPE_SECRET_KEY: 'pk_live_publishable-not-secret',
        TOOLGATE_STRIPE_WEBHOOK_SECRET: 'not-a-signing-secret-value',
        TOOLGATE_STRIPE_UNPAID: 'ignore',
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('TOOLGATE_STRIPE_SECRET_KEY must be a Stripe secret or restricted key');
    expect(message).toContain('TOOLGATE_STRIPE_WEBHOOK_SECRET must be the signing secret');
    expect(message).toContain('TOOLGATE_STRIPE_UNPAID must be fallback');
    expect(message).not.toContain('publishable-not-secret');
    expect(message).not.toContain('not-a-signing-secret-value');
  });

  it('reads PostgreSQL settings', () => {
    const c = loadConfig({
      TOOLGATE_DATABASE_URL: 'postgres://u:p@db:5432/x',
      TOOLGATE_DATABASE_SCHEMA: 'tg',
      TOOLGATE_DATABASE_POOL_SIZE: '4',
      TOOLGATE_DATABASE_TIMEOUT_MS: '1500',
    });
    expect(c.database).toEqual({
      kind: 'postgres',
      url: 'postgres://u:p@db:5432/x',
      schema: 'tg',
      poolSize: 4,
      timeoutMs: 1500,
    });
  });

  it('takes one admin token, named admin, or named tokens separated by commas', () => {
    expect(parseAdminTokens('0123456789abcdef0123')).toEqual([
      { name: 'admin', token: '0123456789abcdef0123' },
    ]);
    expect(parseAdminTokens('ops:0123456789abcdef,billing:fedcba9876543210')).toEqual([
      { name: 'ops', token: '0123456789abcdef' },
      { name: 'billing', token: 'fedcba9876543210' },
    ]);
    expect(() => parseAdminTokens('ops:short')).toThrow(/16/);
    expect(() => parseAdminTokens('ops:0123456789abcdef,ops:fedcba9876543210')).toThrow(/distinct/);
    expect(() => parseAdminTokens('0123456789abcdef,nameless-token-here')).toThrow(/name:token/);
  });

  it('lists key secrets for rotation, the current one first', () => {
    const a = 'a'.repeat(32);
    const b = 'b'.repeat(40);
    expect(loadConfig({ TOOLGATE_KEY_SECRET: `${a},${b}` }).keySecrets).toEqual([a, b]);
    expect(() => loadConfig({ TOOLGATE_KEY_SECRET: `${a},short` })).toThrow(/TOOLGATE_KEY_SECRET/);
  });

  it('names every wrong variable in one error, without echoing secrets or database passwords', () => {
    let message = '';
    try {
      loadConfig({
        PORT: '70000',
        LOG_LEVEL: 'loud',
        TOOLGATE_ADMIN_TOKEN: 'tiny-secret',
        TOOLGATE_DATABASE_URL: 'mysql://u:hunter2@db/x',
      });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      message = (err as Error).message;
    }
    expect(message).toMatch(/PORT/);
    expect(message).toMatch(/LOG_LEVEL/);
    expect(message).toMatch(/TOOLGATE_ADMIN_TOKEN/);
    expect(message).toMatch(/TOOLGATE_DATABASE_URL/);
    expect(message).not.toContain('tiny-secret');
    expect(message).not.toContain('hunter2');
  });
});

describe('unknown TOOLGATE_* variables', () => {
  it('are each named once, with the closest known variable when one is a few edits away', () => {
    expect(
      unknownVariableWarnings({
        TOOLGATE_METRIC_PORT: '9464',
        TOOLGATE_ADMIN_TOKN: 'x',
        TOOLGATE_DATABASE_URI: 'sqlite:x',
        TOOLGATE_FOO: '1',
      }),
    ).toEqual([
      'TOOLGATE_ADMIN_TOKN is not a variable toolgate reads (ignored): did you mean TOOLGATE_ADMIN_TOKEN?',
      'TOOLGATE_DATABASE_URI is not a variable toolgate reads (ignored): did you mean TOOLGATE_DATABASE_URL?',
      'TOOLGATE_FOO is not a variable toolgate reads (ignored); docs/operations.md lists them',
      'TOOLGATE_METRIC_PORT is not a variable toolgate reads (ignored): did you mean TOOLGATE_METRICS_PORT?',
    ]);
  });

  it("leave alone the server's, the CLI's, the tests' and other programs' variables", () => {
    expect(
      unknownVariableWarnings({
        TOOLGATE_ADMIN_TOKEN: 'x',
        TOOLGATE_METRICS_PORT: '9464',
        TOOLGATE_URL: 'http://127.0.0.1:8080',
        TOOLGATE_API_KEY: 'tg_x',
        TOOLGATE_TEST_POSTGRES_URL: 'postgres://x',
        TOOLGATE_REQUIRE_REDIS: '1',
        TOOLGATE_CI_EXTRA_NODES: '22',
        PORT: '1',
        TOOLGATEWAY: 'x',
      }),
    ).toEqual([]);
  });
});
