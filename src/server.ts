/**
 * @module The composition root of a serving process: configuration -> store -> services -> app,
 * then listening, with the first-run demo account and a clean shutdown on SIGTERM/SIGINT.
 */
// First (see tick-shape.ts); main.ts and the CLI import it earlier still.
import './tick-shape.js';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import { readBrandLogo } from './brand-logo.js';
import { type Config, ConfigError, type DatabaseConfig, redactUrl } from './config.js';
import { unknownVariableWarnings } from './config-warnings.js';
import { type ConsoleSettings, makeMailer } from './console/index.js';
import { alertMailerOf, alertThresholdsOf } from './customer-alerts.js';
import type { Brand } from './domain/brand.js';
import { systemClock } from './domain/clock.js';
import { DEFAULT_PLANS } from './domain/plans.js';
import { firstRun } from './first-run.js';
import { exposedGc, IDLE_RELEASE_MS, IdleRelease } from './idle-release.js';
import { resolveKeySecrets } from './key-secret.js';
import { processLogger } from './logger.js';
import type { DeliveryOutcome } from './metrics/metrics.js';
import { connectedApps } from './oauth/connected-apps.js';
import { OAuthServer } from './oauth/server.js';
import { openPayments } from './payments/open.js';
import { createServices, type Services } from './service/index.js';
import { KeyUsageRecorder } from './service/key-usage.js';
import { UsageCounters } from './service/usage-counters.js';
import { openCachedStore } from './store/open.js';
import { serveCatalogue } from './tools/catalogue.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { WebhookInterest } from './webhooks/interest.js';
import { WebhookSender } from './webhooks/sender.js';

export interface Running {
  app: FastifyInstance;
  /** The process's logger (Fastify's own `app.log` is silent when requests are not logged). */
  log: Logger;
  url: string;
  close(): Promise<void>;
}

export async function startServer(config: Config): Promise<Running> {
  const logger = await processLogger(config.logLevel, config.logFormat);
  for (const warning of unknownVariableWarnings(process.env)) logger.warn(warning);
  const consoleOff = consoleOffReason(config);
  if (consoleOff && config.console.enabled) logger.warn(`the console and OAuth are off: ${consoleOff}`);
  const consoleOn = consoleOff === undefined;
  // The key secret first: a start that cannot read or make it says so before the database is touched.
  const keySecrets = resolveKeySecrets(config);
  const brand = brandOf(config);
  const parts = await openParts(config, logger);
  const { catalogue } = parts;
  // The console's links and OAuth's issuer name the public URL; without one, the address this
  // server listens on (known once it does).
  let listening = '';
  const publicUrl = () => config.publicUrl ?? listening;
  const { oauth, services } = composeUseCases(config, consoleOn, keySecrets, parts, logger, publicUrl);
  const consoleSettings = consoleOn
    ? await consoleSettingsOf(config, services, logger, publicUrl, brand)
    : undefined;
  const alertMailer = alertMailerOf(config, parts.store, consoleSettings, logger);
  const app = await buildApp({
    services,
    catalogue,
    brand,
    ...(consoleSettings ? { console: consoleSettings } : {}),
    ...(oauth ? { oauth, connectedApps: connectedApps(oauth) } : {}),
    adminTokens: config.adminTokens,
    logger,
    rateLimits: {
      perKeyPerSecond: config.rateLimit,
      authFailuresPerMinute: config.authFailureLimit,
      clock: systemClock,
      ...(parts.sharedLimit ? { shared: parts.sharedLimit } : {}),
    },
    trustProxy: config.trustProxy,
    allowedOrigins: config.allowedOrigins,
  });
  await app
    .listen({ host: config.host, port: config.port })
    .catch(listenFailure('the API', config.host, config.port));
  const metricsServer =
    parts.metrics &&
    (await (
      await import('./metrics/serve.js')
    )
      .serveMetrics(parts.metrics, config.host, config.metricsPort!)
      .catch(listenFailure('/metrics (TOOLGATE_METRICS_PORT)', config.host, config.metricsPort!)));
  const gc = exposedGc();
  const idle = gc ? new IdleRelease({ gc, idleMs: IDLE_RELEASE_MS }) : undefined;
  if (idle) app.server.on('request', idle.touch);
  idle?.start();
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${hostPort(config.host, port)}`;
  listening = reachableUrl(config.host, port);
  oauth?.start();
  alertMailer?.start();
  if (!config.production) {
    const guide = await firstRun(services, config, {
      apiUrl: listening,
      consoleUrl: consoleOn ? publicUrl() : undefined,
      consoleOff,
    });
    // For the person at the terminal, never the logs: the key and the link are shown only here.
    if (guide) process.stdout.write(guide);
  }
  announce(logger, config, {
    url,
    publicUrl: publicUrl(),
    parts,
    metricsUrl: metricsServer?.url,
    oauth,
    console: consoleSettings !== undefined,
  });
  const close = closer(
    logger,
    async () => {
      // Before the app: closing it closes the console's mailer the alerts are sent through.
      await alertMailer?.stop();
      oauth?.stop();
      idle?.stop();
      await app.close();
      await metricsServer?.close();
    },
    parts,
  );
  return { app, log: logger, url, close };
}

/**
 * The use cases, and OAuth when the console is on (its consent is the console's). OAuth is made
 * first: the key service takes its bearer check (an access token answers as a key does).
 */
function composeUseCases(
  config: Config,
  consoleOn: boolean,
  keySecrets: readonly string[],
  parts: Parts,
  logger: Logger,
  publicUrl: () => string,
) {
  const { store, catalogue } = parts;
  const [keySecret = '', ...previousKeySecrets] = keySecrets;
  const oauth = consoleOn
    ? new OAuthServer({
        store,
        reads: parts.reads,
        keyUsage: parts.keyUsage,
        secret: keySecret,
        publicUrl,
        resourceName: config.brand.name,
        onError: (err, message) => logger.warn({ err }, message),
      })
    : undefined;
  const services = createServices(
    {
      store,
      reads: parts.reads,
      clock: systemClock,
      keyPrefix: config.keyPrefix,
      keySecret: keySecret,
      upstreamEnv: config.upstreamEnv,
      previousKeySecrets,
      keyUsage: parts.keyUsage,
      usageCounters: parts.usageCounters,
      catalogueChanged: () => catalogue.refresh(),
      webhookInterest: parts.webhookInterest,
      webhookAllowPrivate: config.webhookAllowPrivate,
      webhooksChanged: () => parts.webhookInterest.refresh(),
      webhookWake: () => parts.dispatcher.wake(),
      ...(parts.metrics ? { metrics: parts.metrics } : {}),
      ...(parts.payments ? { payments: parts.payments } : {}),
    },
    oauth?.bearer,
  );
  return { oauth, services };
}

/**
 * Why the console (and OAuth, whose consent is the console's) is off, or undefined when it is on.
 * Servers sharing a PostgreSQL database are one deployment: OAuth's issuer and the sign-in links
 * must name the one address all of them are reached at, which no server can guess from its own.
 */
function consoleOffReason(config: Config): string | undefined {
  if (!config.console.enabled) return 'TOOLGATE_CONSOLE=off';
  if (config.database.kind === 'postgres' && config.publicUrl === undefined)
    return 'TOOLGATE_PUBLIC_URL is not set, and on PostgreSQL it must name the one address every server is reached at (for example https://tools.example.com)';
  return undefined;
}

/** The one line that says what this server serves, and where. */
function announce(
  logger: Logger,
  config: Config,
  at: {
    url: string;
    publicUrl: string;
    parts: Parts;
    metricsUrl: string | undefined;
    oauth: OAuthServer | undefined;
    console: boolean;
  },
): void {
  const { parts } = at;
  logger.info(
    {
      url: at.url,
      store: parts.store.backend,
      admin_api: config.adminTokens.length > 0 ? config.adminTokens.map((t) => t.name) : 'off',
      rate_limit: config.rateLimit,
      catalogue_tools: parts.catalogue.list().length,
      metrics: at.metricsUrl ?? 'off',
      shared_rate_limit: config.redisUrl ? redactUrl(config.redisUrl) : 'off',
      console: at.console ? `${at.publicUrl}/console/` : 'off',
      oauth: at.oauth ? `${at.oauth.publicUrl}/.well-known/oauth-authorization-server` : 'off',
      payments: parts.payments ? `stripe, events at ${at.publicUrl}/webhooks/stripe` : 'off',
    },
    'toolgate listening',
  );
}

/** What a serving process runs beside its doors: the store and everything that works in the background. */
async function openParts(config: Config, logger: Logger) {
  // prom-client and the Redis client (some 11 and 20 MiB of memory) are loaded only when configured.
  const metrics =
    config.metricsPort === undefined
      ? undefined
      : new (await import('./metrics/prometheus.js')).PrometheusMetrics();
  const warn = (message: string, fields: Record<string, unknown>) => logger.warn(fields, message);
  const { store, reads, applied } = await openDatabase(config.database, warn);
  if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
  const keyUsage = new KeyUsageRecorder(store, systemClock);
  keyUsage.start();
  const catalogue = await serveCatalogue({
    catalogue: store.catalogue,
    env: process.env,
    upstreamEnv: config.upstreamEnv,
    warn,
    connections: config.upstreamConnections,
    ...(metrics ? { metrics } : {}),
  });
  const usageCounters = new UsageCounters(store.usageHistory, systemClock, {
    retentionDays: config.usageRetentionDays,
    warn,
  });
  usageCounters.start();
  // The customer alerts' thresholds are recorded for every account; the webhooks' as endpoints want.
  const webhookInterest = new WebhookInterest(store, logger, {
    always: alertThresholdsOf(config),
  });
  await webhookInterest.start();
  const webhookSender = new WebhookSender({
    timeoutMs: config.webhookTimeoutMs,
    allowPrivate: config.webhookAllowPrivate,
  });
  const dispatcher = new WebhookDispatcher({
    store,
    sender: webhookSender,
    clock: systemClock,
    timeoutMs: config.webhookTimeoutMs,
    log: logger,
    ...(metrics ? { onOutcome: (o: DeliveryOutcome) => metrics.webhookDelivery(o) } : {}),
  });
  dispatcher.start();
  // Connects in the background: until Redis answers, the limit works as TOOLGATE_REDIS_FAIL says.
  const sharedLimit =
    config.redisUrl === undefined
      ? undefined
      : new (await import('./http/shared-rate-limit.js')).SharedKeyLimiter({
          url: config.redisUrl,
          limit: config.rateLimit,
          failOpen: config.redisFailOpen,
          clock: systemClock,
          log: logger,
        });
  sharedLimit?.start();
  const payments = await openPayments(config.payments, systemClock);
  if (payments && !config.payments?.webhookSecret)
    logger.warn(
      'payments are on but TOOLGATE_STRIPE_WEBHOOK_SECRET is not set: /webhooks/stripe refuses every event, so nothing paid is applied',
    );
  return {
    payments,
    metrics,
    store,
    reads,
    keyUsage,
    catalogue,
    usageCounters,
    webhookInterest,
    webhookSender,
    dispatcher,
    sharedLimit,
  };
}

type Parts = Awaited<ReturnType<typeof openParts>>;

/** The process's close: the doors first (`doors`), then the background work, the store last; once. */
function closer(logger: Logger, doors: () => Promise<void>, parts: Parts): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= (async () => {
      await doors();
      await parts.sharedLimit?.close().catch(() => {});
      parts.webhookInterest.stop();
      // Attempts under way finish (each within the timeout); one cut short is retried after its lease.
      await parts.dispatcher.stop();
      await parts.webhookSender.close();
      await parts.catalogue.close();
      await parts.usageCounters
        .stop()
        .catch((err) => logger.warn({ err }, 'could not write the last usage counts'));
      await parts.keyUsage.stop().catch((err) => logger.warn({ err }, 'could not record key last-use times'));
      await parts.store.close();
    })();
    return closing;
  };
}

/** The brand customers see, its logo read now: a logo that cannot be used stops the start. */
function brandOf(config: Config): Brand {
  const { name, logoFile, color, support } = config.brand;
  return { name, color, support, logo: logoFile ? readBrandLogo(logoFile) : null };
}

/** The console's settings; a sign-up plan that does not exist stops the start (sign-ups would all fail). */
async function consoleSettingsOf(
  config: Config,
  services: Services,
  logger: Logger,
  publicUrl: () => string,
  brand: Brand,
): Promise<ConsoleSettings> {
  const c = config.console;
  if (c.signup === 'open' && !(await services.plans.get(c.signupPlan)).ok)
    throw new ConfigError(
      `TOOLGATE_CONSOLE_SIGNUP_PLAN names the plan "${c.signupPlan}", which does not exist (toolgate plans list shows them)`,
    );
  if (!c.smtpUrl && config.production)
    logger.warn(
      'the console cannot mail sign-in links: TOOLGATE_SMTP_URL is not set (toolgate console link <email> prints one)',
    );
  const settings: ConsoleSettings = {
    publicUrl,
    signup: c.signup,
    signupPlan: c.signupPlan,
    production: config.production,
    ...(c.smtpUrl ? { smtpUrl: c.smtpUrl } : {}),
    ...(c.smtpFrom ? { smtpFrom: c.smtpFrom } : {}),
  };
  // Made here, once: the sign-in links and the alert mails go through the same one.
  return { ...settings, mailer: await makeMailer(settings, brand, logger) };
}

/** Opens and migrates the database; a failure names it (its password hidden), not only the driver's code. */
async function openDatabase(database: DatabaseConfig, warn: (m: string, f: Record<string, unknown>) => void) {
  let opened: Awaited<ReturnType<typeof openCachedStore>> | undefined;
  try {
    opened = await openCachedStore(database, { warn });
    const { applied } = await opened.store.migrate(DEFAULT_PLANS, Math.floor(systemClock.now() / 1000));
    return { ...opened, applied };
  } catch (err) {
    await opened?.store.close().catch(() => {});
    throw new Error(`cannot use the database ${describeDatabase(database)}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** The database as a person can find it: the SQLite file, or PostgreSQL's host:port and database. */
export function describeDatabase(database: DatabaseConfig): string {
  if (database.kind === 'sqlite') return `sqlite:${database.path}`;
  try {
    const url = new URL(database.url);
    // The driver's default port, said: "connection refused" is about a port.
    return `postgres://${url.username ? `${url.username}@` : ''}${url.hostname || 'localhost'}:${url.port || '5432'}${url.pathname}`;
  } catch {
    return redactUrl(database.url);
  }
}

const hostPort = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`;

/** A listen failure saying what could not listen where (Node's message names the address only sometimes). */
const listenFailure = (what: string, host: string, port: number) => (err: Error) => {
  throw new Error(`cannot serve ${what} on ${hostPort(host, port)}: ${err.message}`, { cause: err });
};

/** Where a person on this machine reaches the server: a wildcard address is not one to connect to. */
export function reachableUrl(host: string, port: number): string {
  if (host === '0.0.0.0') return `http://127.0.0.1:${port}`;
  if (host === '::' || host === '[::]') return `http://[::1]:${port}`;
  return `http://${hostPort(host, port)}`;
}
