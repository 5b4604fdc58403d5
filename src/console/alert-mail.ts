/**
 * @module The customer alert mails' words: subject, text and HTML made from one list of paragraphs
 * (the HTML through the console's escaper, by the template `alert-mail`), with the account's name,
 * what crossed, when it resets, a link to the console's Usage or Billing page and one to turn the
 * alerts off. The product's name is one option, so that a brand can stand in for it.
 */
import { Eta } from 'eta';
import type { Crossing, CustomerAlert } from '../domain/alerts.js';
import type { AlertMailPort } from '../webhooks/alert-mailer.js';
import { consoleDir } from './assets.js';
import { accountPath } from './context.js';
import { escapeHtml } from './escape.js';
import type { Mailer, MailMessage } from './mailer.js';
import { ALERTS_ANCHOR } from './pages/alerts.js';

export interface AlertMailOptions {
  /** The public base URL the console's links are made from. */
  publicUrl: () => string;
  /** What customers know the service as (TOOLGATE_BRAND_NAME once there is one). */
  productName?: string;
}

/** The product's name when no brand is given. */
export const DEFAULT_PRODUCT_NAME = 'toolgate';

const eta = new Eta({
  views: consoleDir('views'),
  autoEscape: true,
  escapeFunction: escapeHtml,
  cache: true,
});

const WINDOW_UNITS: Record<string, string> = { m: 'minute', h: 'hour', d: 'day', w: 'week' };

/** `5h` as "5-hour", `1w` as "1-week": a window's length as words. */
export function windowWords(window: string): string {
  const m = /^(\d+)([mhdw])$/.exec(window);
  return m ? `${m[1]}-${WINDOW_UNITS[m[2]!]}` : window;
}

/** `2026-04-15T17:10:02Z` as "2026-04-15 17:10 UTC". */
export function readableTime(iso: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
  return m ? `${m[1]} ${m[2]} UTC` : iso;
}

const count = (n: number) => n.toLocaleString('en-US');

/** A name for a line of plain text: control characters and bidi controls as U+FFFD. */
const plainText = (name: string) =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced.
  name.replace(/[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069]/g, '\ufffd');

interface Words {
  subject: string;
  paragraphs: string[];
  link: { label: string; path: string };
}

/** What to say about a crossing, in the account's name. */
function wordsOf(account: string, c: Crossing): Words {
  if (c.type === 'fair_use.threshold') {
    const what = `${c.category} ${c.unit}`;
    const span = `${windowWords(c.window)} window`;
    const at = c.resetsAt ? readableTime(c.resetsAt) : undefined;
    const reached = c.threshold >= 100;
    const resets = reached
      ? `Calls that need more ${what} are refused until the window resets${at ? `, at ${at}` : ''}.`
      : at
        ? `The window resets at ${at}.`
        : '';
    return {
      subject: reached
        ? `${account} has reached its ${what} limit for this ${span}`
        : `${account} has used ${c.threshold}% of its ${what} for this ${span}`,
      paragraphs: [
        `${account} has used ${count(c.used)} of its ${count(c.limit)} ${what} in the current ${span} ` +
          `(${c.threshold}%); ${count(c.remaining)} left.`,
        resets,
      ].filter((p) => p !== ''),
      link: { label: 'Open Usage in the console', path: 'usage' },
    };
  }
  if (c.type === 'tokens.low_balance')
    return {
      subject: `${account} is low on tokens: ${count(c.balance)} left`,
      paragraphs: [
        `${account}'s token balance fell below ${count(c.lowBalance)}: ${count(c.balance)} tokens are left.`,
        'Calls that cost tokens are refused once the balance reaches 0.',
      ],
      link: { label: 'Open Billing in the console', path: 'billing' },
    };
  return {
    subject: `${account} has run out of tokens`,
    paragraphs: [
      `${account}'s token balance has reached 0.`,
      'Calls that cost tokens are refused until tokens are added.',
    ],
    link: { label: 'Open Billing in the console', path: 'billing' },
  };
}

/** The mail for one alert: subject, text and HTML saying the same. */
export async function alertMessage(alert: CustomerAlert, options: AlertMailOptions): Promise<MailMessage> {
  const product = options.productName ?? DEFAULT_PRODUCT_NAME;
  const base = options.publicUrl().replace(/\/+$/, '');
  // The text part and the subject have no escaper: a name's controls (line breaks, bidi overrides
  // that make the rest of a line read backwards) are shown as U+FFFD there, as the HTML shows them.
  const account = plainText(alert.accountName);
  const words = wordsOf(account, alert.crossing);
  const link = { label: words.link.label, url: `${base}${accountPath(alert.accountId, words.link.path)}` };
  const optOut = `${base}${accountPath(alert.accountId)}#${ALERTS_ANCHOR}`;
  const footer = `You get this email as an owner of ${account} on ${product}.`;
  const text = [
    ...words.paragraphs,
    `${link.label}: ${link.url}`,
    `${footer} To stop these alerts, turn them off in the console: ${optOut}`,
  ].join('\n\n');
  const html = await eta.renderAsync('alert-mail', {
    subject: words.subject,
    paragraphs: words.paragraphs,
    link,
    footer,
    optOut,
    product,
  });
  return { to: alert.to, subject: `[${product}] ${words.subject}`, text: `${text}\n`, html };
}

/** The port the alert mailer sends through: each alert written here and sent by the console's mailer. */
export function alertMails(mailer: Mailer, options: AlertMailOptions): AlertMailPort {
  return { send: async (alert) => mailer.sendMessage(await alertMessage(alert, options)) };
}
