/**
 * @module `toolgate billing`: an account's Stripe side as operators see and mend it: its customer,
 * subscription and latest events (show), its subscription read back from Stripe (sync), and a
 * customer portal URL to send the customer (portal).
 */
import type { Command } from 'commander';
import type { BillingShow } from '../service/payments.js';
import { withAdmin } from './context.js';
import { oneShotCommand } from './one-shot.js';
import { emit, fields, JSON_HELP, type JsonOption, orDash } from './output.js';
import { table } from './table.js';

export function registerBilling(program: Command): void {
  const billing = program
    .command('billing')
    .description("an account's Stripe customer, subscription and events");

  oneShotCommand(billing, {
    name: 'show',
    description:
      "the account's Stripe customer, subscription, status, period, and the last events and what they did",
    argument: '<account-id>',
    ask: (a, id) => a.billing.show(id),
    text: showText,
  });

  oneShotCommand(billing, {
    name: 'sync',
    description: "read the account's subscription back from Stripe and apply it (plan, status, period)",
    argument: '<account-id>',
    ask: (a, id) => a.billing.sync(id),
    text: (r) =>
      `${r.outcome === 'applied' ? 'Applied' : 'Nothing changed'}${r.detail ? `: ${r.detail}` : ''}.`,
  });

  oneShotCommand(billing, {
    name: 'portal',
    description:
      "a Stripe customer portal URL for the account's customer (to send them; it returns to the console)",
    argument: '<account-id>',
    ask: (a, id) => a.billing.portal(id),
    text: (r) => r.url,
  });

  billing
    .command('unmatched')
    .description('Stripe events that matched no account (a customer toolgate did not make), newest first')
    .option('--json', JSON_HELP)
    .action(async (opts: JsonOption) => {
      const events = await withAdmin(opts, (a) => a.billing.unmatched());
      emit(opts, events, () => (events.length === 0 ? 'No unmatched Stripe events.' : eventsTable(events)));
    });
}

/** The events table, newest first. */
const eventsTable = (events: BillingShow['events']) =>
  table(
    // Stripe's event id (to look it up there) gives way before what the event did is cut.
    ['received', 'type', 'outcome', 'detail', { name: 'event', optional: true }],
    events.map((e) => [e.received_at, e.type, e.outcome, e.detail, e.id]),
  );

function showText(b: BillingShow): string {
  const head = fields([
    ['account', b.account_id],
    ['customer', orDash(b.customer)],
    ['subscription', orDash(b.subscription)],
    ['status', orDash(b.subscription_status)],
    ['price', orDash(b.price)],
    ['period', b.current_period_start ? `${b.current_period_start} to ${b.current_period_end}` : '-'],
  ]);
  if (b.events.length === 0) return `${head}\n\nNo Stripe events for this account yet.`;
  return `${head}\n\nLatest events (newest first):\n${eventsTable(b.events)}`;
}
