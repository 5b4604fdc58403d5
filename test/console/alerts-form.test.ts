/**
 * The Overview's Notifications form, with plain fetch against the app as the server builds it, on
 * SQLite and PostgreSQL: an owner turns the alert emails off and on again (audited as them); the
 * form without its CSRF token, or with another session's, is 403; account B's id in its address is
 * 404; a member sees that the emails go to the owners and is answered 403 (the page is for owners); a value that is neither
 * on nor off is 400; a hostile account name is escaped. Nothing is changed by a refused post.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../postgres.js';
import { type Backend, type ConsoleApp, consoleApp } from './console-app-helpers.js';
import { type ConsoleClient, forms, formWithButton, pageText } from './console-client-helpers.js';
import { type World, world } from './security-helpers.js';

const backends: Backend[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];

describe.each(backends)('the Notifications form, on %s', (backend) => {
  let h: ConsoleApp;
  let w: World;

  beforeAll(async () => {
    h = await consoleApp(backend);
    w = await world(h);
  }, 60_000);
  afterAll(() => h?.close());

  const overview = (c: ConsoleClient, accountId = w.a.accountId) => c.get(`/console/a/${accountId}/`);
  const mailsOn = async (accountId: string, userId: string) => {
    const on = await h.services.alerts.mailsOn(accountId, userId);
    if (!on.ok) throw new Error(on.error.message);
    return on.value;
  };
  const alertsPath = (accountId: string) => `/console/a/${accountId}/alerts`;

  it('lets an owner turn the alert emails off and on again, audited as them', async () => {
    const owner = await w.signIn(w.a.owner);
    const before = await overview(owner);
    expect(pageText(before.body)).toContain(`Alert emails to ${w.a.owner} for Alpha Co are on.`);
    const off = await owner.submit(formWithButton(before, 'Turn alert emails off'));
    expect(off.status).toBe(200);
    expect(new URL(off.url).search).toBe('?alerts=saved');
    expect(pageText(off.body)).toContain('Saved.');
    expect(pageText(off.body)).toContain(`Alert emails to ${w.a.owner} for Alpha Co are off.`);
    expect(await mailsOn(w.a.accountId, w.a.ownerUserId)).toBe(false);
    const on = await owner.submit(formWithButton(off, 'Turn alert emails on'));
    expect(pageText(on.body)).toContain('are on.');
    expect(await mailsOn(w.a.accountId, w.a.ownerUserId)).toBe(true);
    const audit = await h.services.audit.list({ accountId: w.a.accountId, limit: 500 });
    const entries = audit.ok ? audit.value.filter((e) => e.action === 'user.alerts') : [];
    expect(entries.map((e) => [e.actor, e.target_id, e.details])).toEqual([
      [`user:${w.a.owner}`, w.a.ownerUserId, { email: w.a.owner, alert_mails: false }],
      [`user:${w.a.owner}`, w.a.ownerUserId, { email: w.a.owner, alert_mails: true }],
    ]);
  });

  it("answers 403 to the form without its CSRF token, with a forged one or another session's", async () => {
    const owner = await w.signIn(w.a.owner);
    const otherSession = await w.signIn(w.a.owner);
    const foreign = await w.csrfFor(otherSession);
    for (const token of [undefined, 'forged-token-0123456789', foreign]) {
      const res = await owner.request('POST', alertsPath(w.a.accountId), {
        form: { alert_mails: 'off', ...(token ? { _csrf: token } : {}) },
        follow: false,
      });
      expect(res.status, `with ${token}`).toBe(403);
    }
    expect(await mailsOn(w.a.accountId, w.a.ownerUserId)).toBe(true);
  });

  it("answers 404 to account B's id in the form's address, and changes nothing of B's", async () => {
    const owner = await w.signIn(w.a.owner);
    const token = await w.csrfFor(owner);
    const res = await owner.request('POST', alertsPath(w.b.accountId), {
      form: { _csrf: token, alert_mails: 'off' },
      follow: false,
    });
    expect(res.status).toBe(404);
    expect(res.body).not.toContain(w.b.name);
    expect(await mailsOn(w.b.accountId, w.b.ownerUserId)).toBe(true);
    expect((await overview(owner, w.b.accountId)).status).toBe(404);
  });

  it('tells a member the emails go to the owners, with no form, and answers 403 to their post', async () => {
    const member = await w.signIn(w.a.member);
    const page = await overview(member);
    expect(pageText(page.body)).toContain("go to the account's owners");
    expect(forms(page.body, page.url).some((f) => f.action.endsWith('/alerts'))).toBe(false);
    const token = await w.csrfFor(member);
    const res = await member.request('POST', alertsPath(w.a.accountId), {
      form: { _csrf: token, alert_mails: 'off' },
      follow: false,
    });
    expect(res.status).toBe(403);
    expect(await mailsOn(w.a.accountId, w.a.memberUserId)).toBe(true);
  });

  it('answers 400 to a value that is neither on nor off, and changes nothing', async () => {
    const owner = await w.signIn(w.a.owner);
    const token = await w.csrfFor(owner);
    for (const value of [undefined, '', 'false', '<script>alert(1)</script>'])
      expect(
        (
          await owner.request('POST', alertsPath(w.a.accountId), {
            form: { _csrf: token, ...(value === undefined ? {} : { alert_mails: value }) },
            follow: false,
          })
        ).status,
        `alert_mails=${value}`,
      ).toBe(400);
    expect(await mailsOn(w.a.accountId, w.a.ownerUserId)).toBe(true);
  });

  it('escapes a hostile account name in the section (markup, quotes, bidi overrides)', async () => {
    const owner = await w.signIn(w.hostile.owner);
    const page = await overview(owner, w.hostile.accountId);
    const section = /<section aria-labelledby="alerts">[\s\S]*?<\/section>/.exec(page.body)?.[0] ?? '';
    expect(section).toContain(
      'Eve &lt;script&gt;alert(1)&lt;/script&gt; &quot;q&#39; onmouseover=&quot;x&quot;',
    );
    expect(section).not.toMatch(/<script|"\s*onmouseover=|\u202e/);
  });
});
