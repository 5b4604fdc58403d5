/**
 * @module `toolgate webhooks`: add (the signing secret is printed once), list, remove, an
 * endpoint's deliveries, and replay. What the values mean is checked by the use case (a URL toolgate
 * may send to, known events, thresholds from 1 to 100, an account that exists), in its own words.
 */
import type { Command } from 'commander';
import { EVENT_TYPES } from '../domain/webhooks.js';
import { DEFAULT_PAGE, MAX_PAGE } from '../service/context.js';
import type { DeliveryRecord, EndpointRecord } from '../service/webhooks.js';
import { commaList, nonEmpty, wholeNumber } from './args.js';
import { withAdmin } from './context.js';
import { oneShotCommand } from './one-shot.js';
import { EXIT_FAILED, emit, JSON_HELP, type JsonOption, orDash } from './output.js';
import { type PageOptions, pageOf, withNextPage, withPageOptions } from './paging.js';
import { table } from './table.js';

/** Thresholds as numbers where they are written as whole numbers; anything else as written, for the use case to name. */
const thresholdList = (value: string): unknown[] =>
  commaList('--thresholds')(value).map((t) => (/^\d+$/.test(t) ? Number(t) : t));

export function registerWebhooks(program: Command): void {
  const webhooks = program
    .command('webhooks')
    .description('signed webhooks: add, list and remove endpoints; see and replay deliveries');
  addCommand(webhooks);
  listCommand(webhooks);
  removeCommand(webhooks);
  deliveriesCommand(webhooks);
  testCommand(webhooks);
  replayCommand(webhooks);
}

/** `webhooks add`: a new endpoint, its signing secret printed once. */
function addCommand(webhooks: Command): void {
  webhooks
    .command('add')
    .description('add an endpoint; its signing secret is printed now and never again')
    .requiredOption('--url <url>', 'the http:// or https:// address to POST events to', nonEmpty('--url'))
    .option('--events <a,b>', 'the events it wants (default: all)', commaList('--events'))
    .option('--account <id>', "only this account's events (default: every account's)")
    .option(
      '--thresholds <80,100>',
      'fair-use percentages that fire fair_use.threshold (default 80,100)',
      thresholdList,
    )
    .option('--json', JSON_HELP)
    .action(
      async (
        opts: JsonOption & {
          url: string;
          server?: string;
          allowHttp?: boolean;
          events?: string[];
          account?: string;
          thresholds?: unknown[];
        },
      ) => {
        // --url is the endpoint's here (the product's word for it): the server is --server or TOOLGATE_URL.
        const added = await withAdmin({ url: opts.server, allowHttp: opts.allowHttp }, (a) =>
          a.webhooks.add({
            url: opts.url,
            ...(opts.events ? { events: opts.events } : {}),
            ...(opts.thresholds ? { thresholds: opts.thresholds } : {}),
            ...(opts.account ? { account_id: opts.account } : {}),
          }),
        );
        emit(opts, added, () =>
          [
            `Added webhook endpoint ${added.id} for ${added.account_id ? `account ${added.account_id}` : 'every account'}:`,
            `  url         ${added.url}`,
            `  events      ${added.events.join(', ')}`,
            `  thresholds  ${added.thresholds.join(', ')}`,
            '',
            'Its signing secret is shown only now; give it to the receiver to verify deliveries with:',
            '',
            `  ${added.secret}`,
          ].join('\n'),
        );
      },
    );
}

/** `webhooks list`: the endpoints, a page at a time. */
function listCommand(webhooks: Command): void {
  withPageOptions(
    webhooks
      .command('list')
      .description('list the endpoints, oldest first (never their secrets)')
      .option('--account <id>', "only this account's endpoints"),
    'endpoint-id',
  )
    .option('--json', JSON_HELP)
    .action(async (opts: JsonOption & PageOptions & { account?: string }) => {
      const list = pageOf(await withAdmin(opts, (a) => a.webhooks.list(opts.account)), byId, opts);
      const command = `toolgate webhooks list${opts.account ? ` --account ${opts.account}` : ''}`;
      emit(opts, list, () =>
        list.length === 0
          ? 'No webhook endpoints.'
          : withNextPage(endpointsTable(list), list, byId, opts, command),
      );
    });
}

/** `webhooks remove`: an endpoint and its deliveries. */
function removeCommand(webhooks: Command): void {
  oneShotCommand(webhooks, {
    name: 'remove',
    description: 'remove an endpoint and its deliveries',
    argument: '<endpoint-id>',
    ask: (a, id) => a.webhooks.remove(id),
    text: (removed) => `Removed webhook endpoint ${removed.id} (${removed.url}).`,
  });
}

/** `webhooks deliveries`: an endpoint's deliveries. */
function deliveriesCommand(webhooks: Command): void {
  webhooks
    .command('deliveries')
    .description("an endpoint's deliveries, oldest first: status, attempts, next attempt, last answer")
    .argument('<endpoint-id>')
    .option(
      '--limit <n>',
      `at most this many (1-${MAX_PAGE}, default ${DEFAULT_PAGE})`,
      wholeNumber('--limit', 1, MAX_PAGE),
    )
    .option('--after <delivery-id>', 'only those after this one')
    .option('--json', JSON_HELP)
    .action(async (id: string, opts: JsonOption & { limit?: number; after?: string }) => {
      const list = await withAdmin(opts, (a) =>
        a.webhooks.deliveries(id, { limit: opts.limit ?? DEFAULT_PAGE, after: opts.after }),
      );
      emit(opts, list, () => deliveriesTable(list) || `Endpoint ${id} has no deliveries.`);
    });
}

/** `webhooks test`: a signed webhook.test event, sent now. */
function testCommand(webhooks: Command): void {
  oneShotCommand(webhooks, {
    name: 'test',
    description:
      'send a signed webhook.test event to an endpoint now, recorded as a delivery (exit 1 if not delivered)',
    argument: '<endpoint-id>',
    ask: (a, id) => a.webhooks.test(id),
    text: testText,
    // The receiver refused or could not be reached: a script must see it without reading the output.
    exitCode: (d) => (d.status !== 'delivered' ? EXIT_FAILED : undefined),
  });
}

/** `webhooks replay`: a delivery sent again. */
function replayCommand(webhooks: Command): void {
  oneShotCommand(webhooks, {
    name: 'replay',
    description: 'send a delivery again now, with a fresh retry schedule (the same webhook-id)',
    argument: '<delivery-id>',
    ask: (a, id) => a.webhooks.replay(id),
    text: (d) => `Delivery ${d.id} (${d.type}) is due again now; a running server sends it within a second.`,
  });
}

/** What the first attempt of a test came to, for people. */
function testText(d: DeliveryRecord): string {
  if (d.status === 'delivered')
    return `Sent webhook.test to endpoint ${d.endpoint_id}: delivered (answered ${d.last_status_code}), as delivery ${d.id}.`;
  const next = d.next_attempt_at === null ? 'no more attempts' : `retried from ${d.next_attempt_at}`;
  return `Sent webhook.test to endpoint ${d.endpoint_id}: not delivered (${orDash(d.last_error)}); delivery ${d.id} is ${d.status}, ${next}.`;
}

const byId = (item: { id: string }) => item.id;

/** `all` for an endpoint that wants every event (what it gets by default), else the list. */
const eventsText = (events: readonly string[]) =>
  EVENT_TYPES.every((t) => events.includes(t)) ? 'all' : events.join(',');

function endpointsTable(list: EndpointRecord[]): string {
  if (list.length === 0) return '';
  return table(
    ['id', 'url', 'account', 'events', 'thresholds', { name: 'created', optional: true }],
    list.map((e) => [
      e.id,
      e.url,
      orDash(e.account_id),
      eventsText(e.events),
      e.thresholds.join(','),
      e.created_at,
    ]),
  );
}

/** The receiver's last answer: its status code when it took the event, else what went wrong (`answered 503`). */
const lastAnswer = (d: DeliveryRecord) =>
  d.status === 'delivered' || d.last_error === null
    ? orDash(d.last_status_code === null ? null : String(d.last_status_code))
    : d.last_error;

function deliveriesTable(list: DeliveryRecord[]): string {
  if (list.length === 0) return '';
  return table(
    // When the next attempt is due matters to the minute.
    ['id', 'type', 'status', 'attempts', { name: 'next attempt', toTheMinute: true }, 'last answer'],
    list.map((d) => [d.id, d.type, d.status, String(d.attempts), orDash(d.next_attempt_at), lastAnswer(d)]),
  );
}
