/**
 * @module How sign-in links and alert mails reach people: SMTP through nodemailer
 * (TOOLGATE_SMTP_URL), or, with no SMTP outside production, the server's log (the one log line
 * allowed to carry a sign-in link).
 */
import type { Logger } from 'pino';

import type { SignInMail } from '../service/console.js';

export type { SignInMail };

/** A mail already written (the customer alerts): a text part and an HTML part. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  send(mail: SignInMail): Promise<void>;
  /** Sends a written mail; throws when the mail server did not take it. */
  sendMessage(message: MailMessage): Promise<void>;
  close?(): void;
}

const subjectOf = (mail: SignInMail) =>
  mail.accountName ? `You are invited to ${mail.accountName} on toolgate` : 'Sign in to toolgate';

const textOf = (mail: SignInMail) =>
  [
    mail.accountName
      ? `You have been invited to the account "${mail.accountName}". Follow this link to sign in:`
      : 'Follow this link to sign in to the toolgate console:',
    '',
    mail.url,
    '',
    'The link works once, within 15 minutes. If you did not ask for it, ignore this email.',
  ].join('\n');

/** nodemailer over `smtpUrl` (smtp:// or smtps://), loaded only when SMTP is configured. */
export async function smtpMailer(smtpUrl: string, from: string): Promise<Mailer> {
  const nodemailer = (await import('nodemailer')).default;
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    async send(mail) {
      await transport.sendMail({ from, to: mail.to, subject: subjectOf(mail), text: textOf(mail) });
    },
    async sendMessage(message) {
      await transport.sendMail({ from, ...message });
    },
    close: () => transport.close(),
  };
}

/** Writes the link to the log at info: for development without SMTP (never in production). */
export function logMailer(log: Pick<Logger, 'info'>): Mailer {
  return {
    async send(mail) {
      log.info({ to: mail.to, url: mail.url }, 'console sign-in link (no SMTP configured)');
    },
    async sendMessage(message) {
      log.info({ to: message.to, subject: message.subject, text: message.text }, 'mail (no SMTP configured)');
    },
  };
}

/** Production without SMTP: nothing can be sent; the operator is told, without the link. */
export function noMailer(log: Pick<Logger, 'warn'>): Mailer {
  return {
    async send(mail) {
      log.warn(
        { to: mail.to },
        'console sign-in link not sent: set TOOLGATE_SMTP_URL (or print one with toolgate console link)',
      );
    },
    async sendMessage(message) {
      log.warn({ to: message.to, subject: message.subject }, 'mail not sent: set TOOLGATE_SMTP_URL');
    },
  };
}
