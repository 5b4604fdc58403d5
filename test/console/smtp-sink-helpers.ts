/**
 * @module A real SMTP server for the console's tests: it accepts any sender and any credentials,
 * keeps every message whole, and finds the console link in one (decoding the MIME transfer
 * encodings nodemailer uses, so a link folded by quoted-printable comes out whole).
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Mail {
  /** Envelope recipients, lower-cased. */
  to: string[];
  from: string;
  /** The raw message as received. */
  raw: string;
  /** Every text and HTML part, decoded. */
  text: string;
}

export interface SmtpSink {
  /** `smtp://` URL with (accepted) credentials, for TOOLGATE_SMTP_URL. */
  url: string;
  port: number;
  messages: Mail[];
  /** Messages sent to `email` so far. */
  to(email: string): Mail[];
  /** Waits for the `nth` (1-based) message to `email`, up to `timeoutMs`. */
  waitFor(email: string, nth?: number, timeoutMs?: number): Promise<Mail>;
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: Mail[] = [];
  const server = new SMTPServer({
    // No TLS certificate to trust: plain SMTP, as on a loopback relay.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: true,
    logger: false,
    onAuth(_auth, _session, callback) {
      callback(null, { user: 'any' });
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        messages.push({
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          raw,
          text: decodeMime(raw),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  const to = (email: string) => messages.filter((m) => m.to.includes(email.toLowerCase()));
  return {
    url: `smtp://sink:secret@127.0.0.1:${port}`,
    port,
    messages,
    to,
    async waitFor(email, nth = 1, timeoutMs = 10_000) {
      for (const deadline = Date.now() + timeoutMs; ; ) {
        const mail = to(email)[nth - 1];
        if (mail) return mail;
        if (Date.now() > deadline)
          throw new Error(
            `no message #${nth} to ${email} within ${timeoutMs} ms (${messages.length} in all)`,
          );
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The console link a message carries (the first URL with /console/ in it). */
export function consoleLink(mail: Mail): string {
  const m = /https?:\/\/[^\s"'<>]+\/console\/[^\s"'<>]*/.exec(mail.text);
  if (!m) throw new Error(`no console link in the message:\n${mail.text}`);
  return decodeEntities(m[0]);
}

/** The decoded text of every part of a MIME message (single part or multipart, nested). */
export function decodeMime(raw: string): string {
  const split = raw.search(/\r?\n\r?\n/);
  const head = split < 0 ? raw : raw.slice(0, split);
  const body = split < 0 ? '' : raw.slice(split).replace(/^\r?\n\r?\n/, '');
  const headers = head.replace(/\r?\n[ \t]+/g, ' ');
  const type = /^content-type:\s*([^;\r\n]+)(.*)$/im.exec(headers);
  const boundary = type ? /boundary="?([^";\r\n]+)"?/i.exec(type[2] ?? '') : null;
  if (type?.[1]?.toLowerCase().startsWith('multipart/') && boundary?.[1]) {
    const marker = `--${boundary[1]}`;
    return body
      .split(marker)
      .slice(1)
      .filter((part) => !part.startsWith('--'))
      .map((part) => decodeMime(part.replace(/^\r?\n/, '')))
      .join('\n');
  }
  const encoding = /^content-transfer-encoding:\s*(\S+)/im.exec(headers)?.[1]?.toLowerCase();
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body);
  return body;
}

function decodeQuotedPrintable(s: string): string {
  const bytes: number[] = [];
  const soft = s.replace(/=\r?\n/g, '');
  for (let i = 0; i < soft.length; i++) {
    const c = soft[i]!;
    const hex = soft.slice(i + 1, i + 3);
    if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** HTML character references as a server's templates write them. */
export function decodeEntities(s: string): string {
  return s
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(Number.parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
