#!/usr/bin/env node
/** @module `npm start`: serve on the configured database (embedded SQLite by default). */
// First: before anything big is loaded (see tick-shape.ts).
import './tick-shape.js';
import { ConfigError, loadConfig } from './config.js';
import { startServer } from './server.js';

export async function serve(overrides: { host?: string; port?: number } = {}): Promise<void> {
  let running: Awaited<ReturnType<typeof startServer>>;
  try {
    const config = loadConfig();
    // Only what was given overrides the environment.
    if (overrides.host !== undefined) config.host = overrides.host;
    if (overrides.port !== undefined) config.port = overrides.port;
    running = await startServer(config);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`toolgate: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const stop = (signal: string) => {
    running.log.info({ signal }, 'shutting down');
    running.close().then(
      () => process.exit(0),
      (err) => {
        running.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

const entry = process.argv[1] ?? '';
if (import.meta.url === `file://${entry}` || entry.endsWith('/dist/main.js')) {
  serve().catch((err) => {
    process.stderr.write(`toolgate: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
