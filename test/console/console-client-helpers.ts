/**
 * @module A person's browser reduced to fetch, for the console's security tests: a cookie jar,
 * redirects followed by hand (so every Set-Cookie is seen), and the forms of a page read out of its
 * HTML (action, method, fields with their values, the `_csrf` token among them).
 */
import { decodeEntities } from './smtp-sink-helpers.js';

export interface Page {
  status: number;
  /** The URL that answered (after redirects). */
  url: string;
  headers: Headers;
  /** Every Set-Cookie line of every answer on the way. */
  setCookies: string[];
  body: string;
}

export interface Form {
  action: string;
  method: string;
  fields: Record<string, string>;
  /** Names of the submit buttons' accessible text (their inner text), for picking a form. */
  buttons: string[];
  /** The form's HTML, for a failure message. */
  html: string;
}

export class ConsoleClient {
  readonly jar = new Map<string, string>();
  /** Extra headers every request carries (X-Forwarded-For when a test plays several addresses). */
  headers: Record<string, string> = {};

  constructor(readonly baseUrl: string) {}

  cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(setCookies: string[]): void {
    for (const line of setCookies) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq < 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = /max-age=0\b/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line);
      if (expired || value === '') this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  /** One request, redirects followed (a 303/302/301 becomes a GET), cookies kept. */
  async request(
    method: string,
    path: string,
    opts: { form?: Record<string, string>; follow?: boolean; headers?: Record<string, string> } = {},
  ): Promise<Page> {
    let url = new URL(path, this.baseUrl).toString();
    const setCookies: string[] = [];
    let body: string | undefined = opts.form ? new URLSearchParams(opts.form).toString() : undefined;
    for (let hop = 0; ; hop++) {
      const res = await fetch(url, {
        method,
        redirect: 'manual',
        headers: {
          ...this.headers,
          ...(this.jar.size > 0 ? { cookie: this.cookieHeader() } : {}),
          ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          ...opts.headers,
        },
        ...(body !== undefined ? { body } : {}),
      });
      const got = res.headers.getSetCookie();
      setCookies.push(...got);
      this.keep(got);
      const location = res.headers.get('location');
      if (opts.follow !== false && location && res.status >= 300 && res.status < 400 && hop < 10) {
        await res.arrayBuffer();
        const next = new URL(location, url);
        if (next.origin !== new URL(this.baseUrl).origin)
          throw new Error(`redirected off the server to ${next}`);
        url = next.toString();
        if (res.status !== 307 && res.status !== 308) {
          method = 'GET';
          body = undefined;
        }
        continue;
      }
      return { status: res.status, url, headers: res.headers, setCookies, body: await res.text() };
    }
  }

  get(path: string, opts: { follow?: boolean } = {}): Promise<Page> {
    return this.request('GET', path, opts);
  }

  post(path: string, form: Record<string, string>, opts: { follow?: boolean } = {}): Promise<Page> {
    return this.request('POST', path, { ...opts, form });
  }

  /** Submits `form` as a browser would (its own fields, overridden by `fill`). */
  submit(form: Form, fill: Record<string, string> = {}, opts: { follow?: boolean } = {}): Promise<Page> {
    return this.request(form.method.toUpperCase(), form.action, {
      ...opts,
      form: { ...form.fields, ...fill },
    });
  }
}

const attr = (tag: string, name: string): string | undefined => {
  const m = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag);
  if (!m) return new RegExp(`\\s${name}(?=[\\s/>])`, 'i').test(tag) ? '' : undefined;
  return decodeEntities(m[1] ?? m[2] ?? m[3] ?? '');
};

const stripTags = (s: string) =>
  decodeEntities(s.replace(/<[^>]*>/g, ''))
    .replace(/\s+/g, ' ')
    .trim();

/** Every form of a page, with the values a browser would submit (submit buttons excluded). */
export function forms(html: string, pageUrl: string): Form[] {
  const out: Form[] = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const open = m[1] ?? '';
    const inner = m[2] ?? '';
    const fields: Record<string, string> = {};
    for (const input of inner.matchAll(/<input\b[^>]*>/gi)) {
      const tag = input[0];
      const name = attr(tag, 'name');
      const type = (attr(tag, 'type') ?? 'text').toLowerCase();
      if (!name || type === 'submit' || type === 'button' || type === 'image') continue;
      if ((type === 'checkbox' || type === 'radio') && attr(tag, 'checked') === undefined) continue;
      fields[name] = attr(tag, 'value') ?? (type === 'checkbox' ? 'on' : '');
    }
    for (const sel of inner.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/gi)) {
      const name = attr(sel[1] ?? '', 'name');
      if (!name) continue;
      const options = [...(sel[2] ?? '').matchAll(/<option\b([^>]*)>([\s\S]*?)<\/option>/gi)];
      const chosen = options.find((o) => attr(o[1] ?? '', 'selected') !== undefined) ?? options[0];
      if (chosen) fields[name] = attr(chosen[1] ?? '', 'value') ?? stripTags(chosen[2] ?? '');
    }
    for (const ta of inner.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/gi)) {
      const name = attr(ta[1] ?? '', 'name');
      if (name) fields[name] = decodeEntities(ta[2] ?? '');
    }
    const buttons: string[] = [];
    for (const b of inner.matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button>/gi)) {
      const type = (attr(b[1] ?? '', 'type') ?? 'submit').toLowerCase();
      if (type !== 'submit') continue;
      buttons.push(stripTags(b[2] ?? '') || (attr(b[1] ?? '', 'aria-label') ?? ''));
      // A named submit button sends its value; tests pick the form by its button, so keep it.
      const name = attr(b[1] ?? '', 'name');
      if (name) fields[name] = attr(b[1] ?? '', 'value') ?? '';
    }
    for (const s of inner.matchAll(/<input\b[^>]*type\s*=\s*["']?submit[^>]*>/gi))
      buttons.push(attr(s[0], 'value') ?? 'Submit');
    out.push({
      action: new URL(attr(open, 'action') || pageUrl, pageUrl).toString(),
      method: (attr(open, 'method') || 'GET').toUpperCase(),
      fields,
      buttons,
      html: m[0],
    });
  }
  return out;
}

/** The one form of the page whose submit button reads `button` (case-insensitive, whole or start). */
export function formWithButton(page: Page, button: string | RegExp): Form {
  const match = (b: string) =>
    typeof button === 'string' ? b.toLowerCase().startsWith(button.toLowerCase()) : button.test(b);
  const found = forms(page.body, page.url).filter((f) => f.buttons.some(match));
  if (found.length === 0)
    throw new Error(
      `no form with a "${button}" button on ${page.url} (${page.status}):\n${page.body.slice(0, 3000)}`,
    );
  return found[0]!;
}

/** Every link target (href) of a page, resolved, on the page's own origin. */
export function links(page: Page): string[] {
  const origin = new URL(page.url).origin;
  return [...page.body.matchAll(/<a\b[^>]*>/gi)]
    .map((m) => attr(m[0], 'href'))
    .filter((h): h is string => h !== undefined && h !== '' && !h.startsWith('#'))
    .map((h) => new URL(h, page.url))
    .filter((u) => u.origin === origin)
    .map((u) => u.pathname + u.search);
}

/** The visible text of a page (tags removed, entities decoded, whitespace folded). */
export function pageText(html: string): string {
  return stripTags(html.replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, ''));
}
