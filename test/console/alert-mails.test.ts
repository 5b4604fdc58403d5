/**
 * Customer alert mails from real server processes (dist/main.js) into a real SMTP sink, on SQLite
 * and PostgreSQL: real tool calls of a metered catalogue tool take an account's window across 80%
 * and 100% and its balance low and out; its owner gets one mail per crossing (text and HTML: the
 * account, what crossed, when the window resets, links to Usage or Billing and to turning the alerts
 * off); an owner who turned them off in the console gets none, nor does a member. Then two servers on
 * one PostgreSQL database, 300 consumptions spread over both: each owner gets each crossing once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readableTime } from '../../src/console/alert-mail.js';
import { type ServerProcess, startServer as startProcess } from '../e2e/process.js';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore, scratchSchemaName } from '../postgres.js';
import { sendJson, startTestUpstream, type TestUpstream } from '../upstream/test-upstream.js';
import { followLink } from './console-app-helpers.js';
import { ConsoleClient, formWithButton, pageText } from './console-client-helpers.js';
import {
  accountWithOwner,
  adminCall,
  adminKey,
  type Backend,
  type ConsoleServer,
  callTool,
  E2E_ADMIN_TOKEN,
  freePort,
  startConsoleServer,
} from './console-server-helpers.js';
import { decodeEntities, type Mail, type SmtpSink, startSmtpSink } from './smtp-sink-helpers.js';

const pg = await postgresAvailable();
const backends: Backend[] = ['sqlite', ...(pg ? (['postgres'] as const) : [])];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A plan whose enrich records allow 10 per 5 h; everything else is far away. */
const plan = (records5h: number) => ({
  unlimited: false,
  limits: {
    enrich: { records: { '5h': records5h, '1w': 100_000 }, requests: { '5h': 100_000 } },
    search: { records: { '5h': 100_000, '1w': 100_000 }, requests: { '5h': 100_000 } },
  },
});

async function admin(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const r = await adminCall(url, method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** A header of the message, unfolded, its RFC 2047 encoded words decoded. */
function header(mail: Mail, name: string): string {
  const head = mail.raw.slice(0, mail.raw.search(/\r?\n\r?\n/)).replace(/\r?\n[ \t]+/g, ' ');
  const line = new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1] ?? '';
  return line
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?utf-8\?([QB])\?([^?]*)\?=/gi, (_, enc: string, text: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(
            text
              .replace(/_/g, ' ')
              .replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
            'latin1',
          ).toString('utf8'),
    );
}

/** Waits for `n` messages to `email`, then a while longer, so that a repeat would be seen too. */
async function settled(sink: SmtpSink, email: string, n: number): Promise<Mail[]> {
  await sink.waitFor(email, n, 20_000);
  await sleep(3_000);
  return sink.to(email);
}

describe.each(backends)('customer alert mails from a real server, on %s', (backend) => {
  let sink: SmtpSink;
  let upstream: TestUpstream;
  let server: ConsoleServer;
  const ANN = `ann-${backend}@example.com`;
  const QUIET = `quiet-${backend}@example.com`;
  const MEMBER = `member-${backend}@example.com`;
  const NAME = 'Acme <Alerts> & Co';

  beforeAll(async () => {
    sink = await startSmtpSink();
    upstream = await startTestUpstream();
    // Two records an answer.
    upstream.on('two', (_call, res) => sendJson(res, 200, { results: [{ n: 1 }, { n: 2 }] }));
    const port = await freePort();
    server = await startConsoleServer(backend, sink.url, {
      PORT: String(port),
      TOOLGATE_PUBLIC_URL: `http://127.0.0.1:${port}`,
    });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await upstream?.close();
    await sink?.close();
  });

  /** `email` signs in through an operator's link and turns the account's alert emails off. */
  async function turnOff(email: string, accountId: string): Promise<void> {
    const { url } = await admin(server.url, 'POST', '/console/links', { email, account_id: accountId });
    const client = new ConsoleClient(server.url);
    const overview = await followLink(client, url);
    const saved = await client.submit(formWithButton(overview, 'Turn alert emails off'));
    expect(pageText(saved.body)).toContain(`Alert emails to ${email} for ${NAME} are off.`);
  }

  it('mails the owner once per crossing of real tool calls, and not an owner who turned them off, nor a member', async () => {
    const url = server.url;
    await admin(url, 'PUT', '/plans/alerts_small', plan(10));
    await admin(url, 'PUT', '/tools/alert_search', {
      upstream: { url: `${upstream.url}/two` },
      metering: { category: 'enrich', tokens_per_call: 1 },
    });
    const { accountId } = await accountWithOwner(url, {
      name: NAME,
      email: ANN,
      tokens: 5,
      plan: 'alerts_small',
    });
    await admin(url, 'POST', `/accounts/${accountId}/users`, { email: QUIET, role: 'owner' });
    await admin(url, 'POST', `/accounts/${accountId}/users`, { email: MEMBER, role: 'member' });
    await admin(url, 'PATCH', `/accounts/${accountId}`, { low_balance: 3 });
    await turnOff(QUIET, accountId);
    const { key } = await adminKey(url, accountId);
    // Two records and one token a call: 8 records (80%) and 10 (100%) of the window; 2 tokens
    // (under 3: low) and 0 (out).
    for (let i = 0; i < 5; i++) expect((await callTool(url, key, 'alert_search')).status).toBe(200);
    expect((await callTool(url, key, 'alert_search')).status).not.toBe(200);
    const resetsAt = (await callTool(url, key, 'get_account')).body.results.fair_use.enrich.records['5h']
      .resets_at;

    const mails = await settled(sink, ANN, 4);
    expect(mails).toHaveLength(4);
    expect(sink.to(QUIET)).toEqual([]);
    expect(sink.to(MEMBER)).toEqual([]);
    const bySubject = new Map(mails.map((m) => [header(m, 'subject'), m]));
    const subjects = [
      `[toolgate] ${NAME} has used 80% of its enrich records for this 5-hour window`,
      `[toolgate] ${NAME} has reached its enrich records limit for this 5-hour window`,
      `[toolgate] ${NAME} is low on tokens: 2 left`,
      `[toolgate] ${NAME} has run out of tokens`,
    ];
    expect([...bySubject.keys()].sort()).toEqual([...subjects].sort());
    for (const m of mails) {
      expect(m.from).toBe('console@toolgate.test');
      expect(m.raw).toMatch(/content-type: text\/plain/i);
      expect(m.raw).toMatch(/content-type: text\/html/i);
      // The HTML part escapes the name; the text part writes it as it is.
      expect(m.text).toContain('Acme &lt;Alerts&gt; &amp; Co');
      expect(m.text).toContain(`turn them off in the console: ${url}/console/a/${accountId}/#alerts`);
    }
    const eighty = bySubject.get(subjects[0]!)!;
    expect(eighty.text).toContain(
      `${NAME} has used 8 of its 10 enrich records in the current 5-hour window (80%); 2 left.`,
    );
    expect(eighty.text).toContain(`The window resets at ${readableTime(resetsAt)}.`);
    expect(eighty.text).toContain(`Open Usage in the console: ${url}/console/a/${accountId}/usage`);
    expect(decodeEntities(eighty.text)).toContain(`href="${url}/console/a/${accountId}/#alerts"`);
    expect(bySubject.get(subjects[1]!)!.text).toContain(
      `Calls that need more enrich records are refused until the window resets, at ${readableTime(resetsAt)}.`,
    );
    expect(bySubject.get(subjects[2]!)!.text).toContain(
      `Open Billing in the console: ${url}/console/a/${accountId}/billing`,
    );
  }, 90_000);
});

describe.skipIf(!pg)('customer alert mails from two servers on one PostgreSQL database', () => {
  const schema = scratchSchemaName();
  let sink: SmtpSink;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    sink = await startSmtpSink();
    const env = {
      TOOLGATE_DATABASE_URL: POSTGRES_URL,
      TOOLGATE_DATABASE_SCHEMA: schema,
      TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
      TOOLGATE_KEY_SECRET: 'e2e-key-secret-0123456789abcdef0123456789',
      TOOLGATE_PUBLIC_URL: 'https://tools.example.test',
      TOOLGATE_SMTP_URL: sink.url,
      TOOLGATE_SMTP_FROM: 'toolgate <console@toolgate.test>',
      NODE_ENV: 'production',
    };
    a = await startProcess(env);
    b = await startProcess(env);
  }, 60_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await scratchPostgresStore(schema).cleanup();
    await sink?.close();
  });

  it('300 consumptions over both servers: each owner gets each crossing exactly once', async () => {
    await admin(a.url, 'PUT', '/plans/alerts_pair', plan(300));
    const { accountId } = await accountWithOwner(a.url, {
      name: 'Pair Co',
      email: 'ann-pair@example.com',
      plan: 'alerts_pair',
    });
    await admin(b.url, 'POST', `/accounts/${accountId}/users`, {
      email: 'bob-pair@example.com',
      role: 'owner',
    });
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        adminCall(i % 2 === 0 ? a.url : b.url, 'POST', `/accounts/${accountId}/usage`, {
          category: 'enrich',
          records: 1,
        }),
      ),
    );
    expect(answers.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    for (const email of ['ann-pair@example.com', 'bob-pair@example.com']) {
      const mails = await settled(sink, email, 2);
      expect(mails.map((m) => header(m, 'subject')).sort()).toEqual([
        '[toolgate] Pair Co has reached its enrich records limit for this 5-hour window',
        '[toolgate] Pair Co has used 80% of its enrich records for this 5-hour window',
      ]);
      for (const m of mails)
        expect(m.text).toContain(`https://tools.example.test/console/a/${accountId}/usage`);
    }
    expect(sink.messages).toHaveLength(4);
  }, 90_000);
});
