/**
 * @module How sign-in links and alert mails reach people: SMTP through nodemailer
 * (TOOLGATE_SMTP_URL), or, with no SMTP outside production, the server's log (the one log line
 * allowed to carry a sign-in link).
 */
import type { Logger } from 'pino';
import { type Brand, DEFAULT_BRAND } from '../domain/brand.js';
import type { SignInMail } from '../service/console.js';
import { escapeHtml } from './escape.js';

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

const subjectOf = (mail: SignInMail, brand: Brand) =>
  mail.accountName ? `You are invited to ${mail.accountName} on ${brand.name}` : `Sign in to ${brand.name}`;

/** The mail's lines: its lead, the link, what to know of it, and where to get help. */
function linesOf(mail: SignInMail, brand: Brand) {
  return {
    lead: mail.accountName
      ? `${mail.invitedBy ?? 'An owner'} invited you to the account "${mail.accountName}" on ${brand.name}. Follow this link to sign in:`
      : `Follow this link to sign in to ${brand.name}:`,
    note: mail.accountName
      ? 'The link works once, within 7 days. If you do not know who sent it, ignore this email.'
      : 'The link works once, within 15 minutes. If you did not ask for it, ignore this email.',
    help: brand.support ? `Questions? ${brand.support}` : null,
  };
}

export function textOf(mail: SignInMail, brand: Brand = DEFAULT_BRAND): string {
  const l = linesOf(mail, brand);
  return [l.lead, '', mail.url, '', l.note, ...(l.help ? ['', l.help] : [])].join('\n');
}

export function htmlOf(mail: SignInMail, brand: Brand = DEFAULT_BRAND): string {
  const l = linesOf(mail, brand);
  const p = (text: string) => `<p>${escapeHtml(text)}</p>`;
  return [
    '<!doctype html><html lang="en"><body>',
    p(l.lead),
    `<p><a href="${escapeHtml(mail.url)}">${escapeHtml(subjectOf(mail, brand))}</a></p>`,
    p(l.note),
    l.help ? p(l.help) : '',
    '</body></html>',
  ].join('\n');
}

/** nodemailer over `smtpUrl` (smtp:// or smtps://), loaded only when SMTP is configured. */
export async function smtpMailer(
  smtpUrl: string,
  from: string,
  brand: Brand = DEFAULT_BRAND,
): Promise<Mailer> {
  const nodemailer = (await import('nodemailer')).default;
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    async send(mail) {
      await transport.sendMail({
        from,
        to: mail.to,
        subject: subjectOf(mail, brand),
        text: textOf(mail, brand),
        html: htmlOf(mail, brand),
      });
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
