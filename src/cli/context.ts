/**
 * @module Wiring for one CLI command: the configuration, the store on TOOLGATE_DATABASE_URL (migrated,
 * so a fresh database works), the services on it acting as the OS user (so every change is
 * audited); the store is closed when the command ends.
 * Configuration and store are imported on first use: the configuration schema alone takes a third of
 * a second to load, which `--help` and usage errors need not pay.
 */
import { userInfo } from 'node:os';
import { nowSeconds, systemClock } from '../domain/clock.js';
import { DEFAULT_PLANS } from '../domain/plans.js';
import type { Services } from '../service/index.js';
import type { Store } from '../store/store.js';

async function open() {
  const [{ loadConfig, resolveKeySecrets }, { openStore }, { createServices }] = await Promise.all([
    import('../config.js'),
    import('../store/open.js'),
    import('../service/index.js'),
  ]);
  const config = loadConfig();
  return { config, resolveKeySecrets, openStore, createServices };
}

/** Runs `work` on the configured store, as it is (not migrated first). */
export async function withStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
  const { config, openStore } = await open();
  const store = await openStore(config.database);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** Who acts through the CLI, for the audit trail: `cli:<OS user name>`, or `cli` where the OS cannot say. */
export function cliActor(): string {
  try {
    const { username } = userInfo();
    return username ? `cli:${username}` : 'cli';
  } catch {
    // No passwd entry for the uid (some containers): still audited, just without a name.
    return 'cli';
  }
}

/** Runs `work` with the services on the configured store, migrated first, acting as the CLI's user. */
export async function withServices<T>(work: (services: Services) => Promise<T>): Promise<T> {
  const { config, resolveKeySecrets, openStore, createServices } = await open();
  const [keySecret, ...previousKeySecrets] = resolveKeySecrets(config);
  const store = await openStore(config.database);
  try {
    await store.migrate(DEFAULT_PLANS, nowSeconds(systemClock));
    return await work(
      createServices({
        store,
        clock: systemClock,
        keyPrefix: config.keyPrefix,
        keySecret: keySecret!,
        previousKeySecrets,
        webhookAllowPrivate: config.webhookAllowPrivate,
        upstreamEnv: config.upstreamEnv,
      }).as(cliActor()),
    );
  } finally {
    await store.close();
  }
}
