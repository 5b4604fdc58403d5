/**
 * @module How sign-in links reach people: SMTP through nodemailer (TOOLGATE_SMTP_URL), or, with no
 * SMTP outside production, the server's log (the one log line allowed to carry a link).
 */
import type { Logger } from 'pino';

import type { SignInMail } from '../service/console.js';

export type { SignInMail };

export interface Mailer {
  send(mail: SignInMail): Promise<void>;
  close?(): void;
}

const subjectOf = (mail: SignInMail) =>
  mail.accountName ? `You are invited to ${mail.accountName} on toolgate` : 'Sign in to toolgate';

const textOf = (mail: SignInMail) =>
  [
    mail.accountName
      ? `${mail.invitedBy ?? 'An owner'} invited you to the account "${mail.accountName}". Follow this link to sign in:`
      : 'Follow this link to sign in to the toolgate console:',
    '',
    mail.url,
    '',
    mail.accountName
      ? 'The link works once, within 7 days. If you do not know who sent it, ignore this email.'
      : 'The link works once, within 15 minutes. If you did not ask for it, ignore this email.',
  ].join('\n');

/** nodemailer over `smtpUrl` (smtp:// or smtps://), loaded only when SMTP is configured. */
export async function smtpMailer(smtpUrl: string, from: string): Promise<Mailer> {
  const nodemailer = (await import('nodemailer')).default;
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    async send(mail) {
      await transport.sendMail({ from, to: mail.to, subject: subjectOf(mail), text: textOf(mail) });
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
  };
}
