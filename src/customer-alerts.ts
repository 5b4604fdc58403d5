/**
 * @module The customer alert mails as a serving process wires them: on while the console is on and
 * can mail, their thresholds carried by every consumption, sent through the console's one mailer.
 */
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { alertMails } from './console/alert-mail.js';
import type { ConsoleSettings } from './console/index.js';
import { ALERT_THRESHOLDS } from './domain/alerts.js';
import { systemClock } from './domain/clock.js';
import type { Store } from './store/store.js';
import { AlertMailer } from './webhooks/alert-mailer.js';

/** Customer alerts are mailed while the console is on and can mail (SMTP, or the log outside production). */
const customerAlertsOn = (config: Config) =>
  config.console.enabled && (config.console.smtpUrl !== undefined || !config.production);

/** The customer alert mailer, sending through the console's mailer; none while alerts are off. */
export function alertMailerOf(
  config: Config,
  store: Store,
  settings: ConsoleSettings | undefined,
  logger: Logger,
): AlertMailer | undefined {
  if (!settings?.mailer || !customerAlertsOn(config)) return undefined;
  const mail = alertMails(settings.mailer, { publicUrl: settings.publicUrl, productName: config.brand.name });
  return new AlertMailer({ store, mail, clock: systemClock, log: logger });
}

/** The thresholds every consumption watches for the alert mails (none while they are off). */
export const alertThresholdsOf = (config: Config): readonly number[] =>
  customerAlertsOn(config) ? ALERT_THRESHOLDS : [];
