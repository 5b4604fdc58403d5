/**
 * @module The first start on an empty database (never in production): a demo account with a key
 * and an owner, and the plain lines that tell the person at the terminal what to do next.
 */
import { type Config, redactUrl } from './config.js';
import type { Result } from './domain/errors.js';
import { actingAs } from './service/audit.js';
import type { Services } from './service/index.js';

/** The demo account's owner: example.com is reserved (RFC 2606), so no mail reaches anyone by mistake. */
export const DEMO_OWNER = 'owner@example.com';

/** What the guide names, known once the server listens. */
export interface StartFacts {
  /** Where a person on this machine reaches the API: the curl line's address. */
  apiUrl: string;
  /** The console's address (the public URL); undefined while the console is off. */
  consoleUrl: string | undefined;
  /** Why the console is off, when it is. */
  consoleOff: string | undefined;
}

interface Demo {
  accountId: string;
  key: string;
  /** A sign-in link for DEMO_OWNER, when the console is on. */
  signInUrl: string | undefined;
}

/**
 * On an empty database: the demo account, its key, its owner and a sign-in link, and the guide to
 * print (undefined when the database had an account). Of servers starting together on an empty
 * database, one creates it: the account is made only while the database has none, decided in the
 * transaction that inserts it.
 */
export async function firstRun(services: Services, config: Config, facts: StartFacts) {
  const system = actingAs('system:first-run');
  const account = await services.accounts.createFirst(
    { name: 'Demo account', plan: 'free', tokens: 1000 },
    system,
  );
  if (account === undefined) return undefined;
  const accountId = must(account).id;
  const key = must(await services.keys.create(accountId, 'demo', system)).key;
  must(await services.users.add(accountId, DEMO_OWNER, 'owner', system));
  // Made as `toolgate console link` makes one: single use, 15 minutes, audited.
  const consoleUrl = facts.consoleUrl;
  const signInUrl =
    consoleUrl === undefined
      ? undefined
      : must(
          await services
            .console({
              publicUrl: () => consoleUrl,
              signup: config.console.signup,
              signupPlan: config.console.signupPlan,
            })
            .operatorLink(system, DEMO_OWNER, accountId),
        ).url;
  return firstRunGuide({ accountId, key, signInUrl }, config, facts);
}

function must<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`cannot create the demo account: ${result.error.message}`);
  return result.value;
}

/** The guide, in plain lines: the API and its key, the console and a way in, where mail goes, the admin API. */
export function firstRunGuide(demo: Demo, config: Config, facts: StartFacts): string {
  const { apiUrl, consoleUrl } = facts;
  const label = (name: string) => `${name}:`.padEnd(12);
  const indent = ' '.repeat(12);
  const console =
    consoleUrl === undefined
      ? [`${label('Console')}off: ${facts.consoleOff}`]
      : [
          `${label('Console')}${consoleUrl}/console/`,
          `${indent}Sign in as the demo account's owner, ${DEMO_OWNER} (this link works once, within 15 minutes):`,
          `${indent}${demo.signInUrl}`,
          `${indent}Another link later: npx toolgate console link ${DEMO_OWNER}`,
        ];
  const mail = config.console.smtpUrl
    ? `through ${redactUrl(config.console.smtpUrl)}`
    : "to the server's log (set TOOLGATE_SMTP_URL to send it)";
  const names = config.adminTokens.map((t) => t.name).join(', ');
  const admin =
    config.adminTokens.length > 0
      ? `on at ${apiUrl}/admin/v1 (tokens: ${names})`
      : 'off (set TOOLGATE_ADMIN_TOKEN, 16 characters or more, to turn it on; the CLI works on the database meanwhile)';
  return [
    '',
    `toolgate: created a demo account (${demo.accountId}) on this empty database; its API key, shown only now:`,
    '',
    `  ${demo.key}`,
    '',
    'Try the API:',
    '',
    `  curl -s -X POST ${apiUrl}/api/v1/tools/get_account \\`,
    `    -H 'Authorization: Bearer ${demo.key}' -H 'Content-Type: application/json' -d '{}'`,
    '',
    ...console,
    `${label('Mail')}${mail}`,
    `${label('Admin API')}${admin}`,
    '',
    '',
  ].join('\n');
}
