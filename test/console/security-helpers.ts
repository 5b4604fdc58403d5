/**
 * @module The accounts the console's security tests play with: A (the attacker's own: an owner, a
 * member, two keys), B (the victim: the same) and one with hostile names; signing in as any of their
 * users; and filling a route's path parameters with A's ids, B's, or A's account with B's other ids.
 */

import { actingAs } from '../../src/service/audit.js';
import type { Services } from '../../src/service/index.js';
import { callTool } from '../calls.js';
import { addUser, type ConsoleApp, followLink } from './console-app-helpers.js';
import { ConsoleClient, forms, links, type Page } from './console-client-helpers.js';

export interface Side {
  accountId: string;
  name: string;
  owner: string;
  ownerUserId: string;
  member: string;
  memberUserId: string;
  key: string;
  keyId: string;
  spareKey: string;
  spareKeyId: string;
}

export const HOSTILE_ACCOUNT = 'Eve <script>alert(1)</script> "q\' onmouseover="x" \u202Eevil';
export const HOSTILE_KEY = '<img src=x onerror=alert(1)> "k\' \u202Ekey';

async function side(services: Services, name: string, tag: string): Promise<Side> {
  const account = await services.accounts.create({ name, tokens: 100 });
  if (!account.ok) throw new Error(account.error.message);
  const accountId = account.value.id;
  const owner = `${tag}-owner@example.com`;
  const member = `${tag}-member@example.com`;
  const ownerUser = await addUser(services, accountId, owner, 'owner');
  const memberUser = await addUser(services, accountId, member, 'member');
  const key = await services.keys.create(accountId, `${tag} main`);
  const spare = await services.keys.create(accountId, `${tag} spare`);
  if (!key.ok || !spare.ok) throw new Error('keys');
  return {
    accountId,
    name,
    owner,
    ownerUserId: ownerUser.id,
    member,
    memberUserId: memberUser.id,
    key: key.value.key,
    keyId: key.value.id,
    spareKey: spare.value.key,
    spareKeyId: spare.value.id,
  };
}

/** `offer`: a plan or pack for sale, no account's: the same in every variant (the account decides). */
type IdKind = 'account' | 'key' | 'user' | 'grant' | 'offer';

/** What a path parameter names: by its name, else by the path segment before it. */
function kindOf(param: string, before: string): IdKind {
  if (/acc/i.test(param) || before === 'a' || before === 'accounts') return 'account';
  if (/key/i.test(param) || before === 'keys') return 'key';
  if (/user|member/i.test(param) || before === 'members' || before === 'users') return 'user';
  if (/grant|app|client/i.test(param) || before === 'apps' || before === 'grants') return 'grant';
  if (/^(plan|pack)$/.test(param)) return 'offer';
  throw new Error(
    `a console route has a parameter ":${param}" (after "/${before}/") this test does not know: teach security-helpers.ts which id of account B to try there`,
  );
}

export type World = Awaited<ReturnType<typeof world>>;

export async function world(h: ConsoleApp) {
  const tag = Math.random().toString(36).slice(2, 8);
  const a = await side(h.services, 'Alpha Co', `a${tag}`);
  const b = await side(h.services, 'Bravo Ltd', `b${tag}`);
  const hostile = await side(h.services, HOSTILE_ACCOUNT, `e${tag}`);
  await h.services.keys.create(hostile.accountId, HOSTILE_KEY);

  const operator = h.services.console({
    publicUrl: () => h.url,
    signup: 'closed',
    signupPlan: 'free',
  });

  const idOf = (s: Side, kind: IdKind): string =>
    kind === 'offer'
      ? 'free'
      : kind === 'account'
        ? s.accountId
        : kind === 'key'
          ? s.spareKeyId
          : kind === 'user'
            ? s.memberUserId
            : // No grant exists in B (OAuth is not in play here): an id of nobody, which must be 404 too.
              'grt_00000000000000000000000000';

  return {
    a,
    b,
    hostile,

    /** An operator's link for `email`, made on the database as `toolgate console link` makes it. */
    async link(email: string, accountId?: string): Promise<string> {
      const made = await operator.operatorLink(actingAs('cli:console-tests'), email, accountId);
      if (!made.ok) throw new Error(`console link for ${email}: ${made.error.message}`);
      return made.value.url;
    },

    /** A fresh client signed in as `email` through an operator's link. */
    async signIn(email: string): Promise<ConsoleClient> {
      const c = new ConsoleClient(h.url);
      const page = await followLink(c, await this.link(email));
      if (page.status !== 200) throw new Error(`signing ${email} in: ${page.status} at ${page.url}`);
      return c;
    },

    /**
     * `path` with its parameters filled: `own` all of A's, `other` all of B's, `mixed` A's account
     * with B's other ids (undefined when the path has no other id).
     */
    fill(path: string, variant: 'own' | 'other' | 'mixed'): string | undefined {
      let others = 0;
      const filled = path.replace(/(?<=\/([^/]*)\/):([A-Za-z_]\w*)/g, (_m, before: string, param: string) => {
        const kind = kindOf(param, before);
        if (kind !== 'account' && kind !== 'offer') others++;
        const from = variant === 'own' || (variant === 'mixed' && kind === 'account') ? a : b;
        return idOf(from, kind);
      });
      return variant === 'mixed' && others === 0 ? undefined : filled;
    },

    /** Values a form's other fields may need, so that only the id or the token decides the answer. */
    plausibleFields: (): Record<string, string> => ({
      name: 'plausible',
      email: `plausible-${tag}@example.com`,
      role: 'member',
      confirm: 'yes',
    }),

    /** A form's fields with every id of A's replaced by B's of the same kind; undefined if none. */
    swapIds(fields: Record<string, string>): Record<string, string> | undefined {
      const swaps = new Map<string, string>([
        [a.accountId, b.accountId],
        [a.keyId, b.keyId],
        [a.spareKeyId, b.spareKeyId],
        [a.ownerUserId, b.ownerUserId],
        [a.memberUserId, b.memberUserId],
      ]);
      let swapped = false;
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(fields)) {
        const to = swaps.get(v);
        if (to !== undefined) swapped = true;
        out[k] = to ?? v;
      }
      return swapped ? out : undefined;
    },

    /** Every console page of account A the client reaches by links from its Overview (GET only). */
    async crawl(c: ConsoleClient): Promise<Page[]> {
      const seen = new Set<string>();
      const queue = [`/console/a/${a.accountId}/`];
      const pages: Page[] = [];
      while (queue.length > 0 && pages.length < 40) {
        const path = queue.shift()!;
        if (seen.has(path)) continue;
        seen.add(path);
        const page = await c.get(path);
        if (page.status !== 200 || !/text\/html/.test(page.headers.get('content-type') ?? '')) continue;
        pages.push(page);
        for (const next of links(page))
          if (next.startsWith(`/console/a/${a.accountId}`) && !seen.has(next)) queue.push(next);
      }
      return pages;
    },

    /** A valid CSRF token of the client's session (from a form of A's API keys page). */
    async csrfFor(c: ConsoleClient): Promise<string> {
      for (const path of [`/console/a/${a.accountId}/keys`, `/console/a/${a.accountId}/`]) {
        const page = await c.get(path);
        const token = forms(page.body, page.url)
          .map((f) => f.fields._csrf)
          .find((t) => t);
        if (token) return token;
      }
      throw new Error('no form with a _csrf field on the API keys page or the Overview');
    },

    async keyWorks(key: string): Promise<boolean> {
      return (await callTool(h.url, key, 'get_account', {})).status === 200;
    },

    async keyCount(accountId: string): Promise<number> {
      const keys = await h.services.keys.list(accountId);
      return keys.ok ? keys.value.length : -1;
    },

    async userIds(accountId: string): Promise<string[]> {
      const users = await h.services.users.list(accountId);
      return users.ok ? users.value.map((u) => u.id) : [];
    },
  };
}

/** The `_csrf` value of the first form of an HTML page that has one. */
export function csrfTokenOf(html: string): string | undefined {
  return (
    /name\s*=\s*["']?_csrf["']?[^>]*value\s*=\s*["']([^"']+)/i.exec(html)?.[1] ??
    /value\s*=\s*["']([^"']+)["'][^>]*name\s*=\s*["']?_csrf/i.exec(html)?.[1]
  );
}
