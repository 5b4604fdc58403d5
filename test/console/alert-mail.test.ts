/**
 * The customer alert mails' words: each crossing says the account, what crossed (used of the limit,
 * what is left, or the balance), when the window resets, links to the console's Usage or Billing
 * page and to turning the alerts off; the text and HTML parts say the same, the HTML with hostile
 * names escaped (markup, quotes, bidi overrides); the subject is one line; the product's name is one
 * option.
 */
import { describe, expect, it } from 'vitest';
import { alertMessage, readableTime, windowWords } from '../../src/console/alert-mail.js';
import type { Crossing, CustomerAlert } from '../../src/domain/alerts.js';
import { HOSTILE_ACCOUNT } from './security-helpers.js';
import { decodeEntities } from './smtp-sink-helpers.js';

const BASE = 'https://tools.example.com';
const alert = (crossing: Crossing, accountName = 'Acme Co'): CustomerAlert => ({
  id: 'alm_01',
  to: 'ann@example.com',
  accountId: 'acc_01',
  accountName,
  at: 0,
  crossing,
});
const window80: Crossing = {
  type: 'fair_use.threshold',
  category: 'enrich',
  unit: 'records',
  window: '5h',
  threshold: 80,
  limit: 1000,
  used: 812,
  remaining: 188,
  resetsAt: '2026-04-15T17:10:02Z',
};
const write = (c: CustomerAlert, productName?: string) =>
  alertMessage(c, { publicUrl: () => `${BASE}/`, ...(productName ? { productName } : {}) });
/** The HTML's text, tags dropped and entities decoded: what a reader of the HTML part sees. */
const seen = (html: string) =>
  decodeEntities(html.replace(/<title>.*<\/title>/s, '').replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');

describe('alert mails', () => {
  it('say which window of which account crossed 80%, with what is left and when it resets', async () => {
    const m = await write(alert(window80));
    expect(m.to).toBe('ann@example.com');
    expect(m.subject).toBe('[toolgate] Acme Co has used 80% of its enrich records for this 5-hour window');
    expect(m.text).toContain(
      'Acme Co has used 812 of its 1,000 enrich records in the current 5-hour window (80%); 188 left.',
    );
    expect(m.text).toContain('The window resets at 2026-04-15 17:10 UTC.');
    expect(m.text).toContain(`Open Usage in the console: ${BASE}/console/a/acc_01/usage`);
    expect(m.text).toContain(`turn them off in the console: ${BASE}/console/a/acc_01/#alerts`);
    expect(m.text).toContain('as an owner of Acme Co on toolgate');
    expect(m.html).toContain(`<a href="${BASE}/console/a/acc_01/usage">Open Usage in the console</a>`);
    expect(m.html).toContain(`<a href="${BASE}/console/a/acc_01/#alerts">Turn these alerts off</a>`);
    // The HTML part says what the text part says.
    for (const line of [
      '812 of its 1,000 enrich records',
      '2026-04-15 17:10 UTC',
      'owner of Acme Co on toolgate',
    ])
      expect(seen(m.html)).toContain(line);
  });

  it('say a window reached its limit, and that calls are refused until it resets', async () => {
    const m = await write(alert({ ...window80, window: '1w', threshold: 100, used: 1000, remaining: 0 }));
    expect(m.subject).toBe('[toolgate] Acme Co has reached its enrich records limit for this 1-week window');
    expect(m.text).toContain(
      'Calls that need more enrich records are refused until the window resets, at 2026-04-15 17:10 UTC.',
    );
  });

  it('say the balance is low or out, with a link to Billing', async () => {
    const low = await write(alert({ type: 'tokens.low_balance', balance: 42, lowBalance: 100 }));
    expect(low.subject).toBe('[toolgate] Acme Co is low on tokens: 42 left');
    expect(low.text).toContain("Acme Co's token balance fell below 100: 42 tokens are left.");
    expect(low.text).toContain(`Open Billing in the console: ${BASE}/console/a/acc_01/billing`);
    const out = await write(alert({ type: 'tokens.depleted' }));
    expect(out.subject).toBe('[toolgate] Acme Co has run out of tokens');
    expect(out.text).toContain("Acme Co's token balance has reached 0.");
    expect(seen(out.html)).toContain('Calls that cost tokens are refused until tokens are added.');
  });

  it('escape a hostile account name in the HTML, and keep the subject on one line', async () => {
    const m = await write(alert(window80, `${HOSTILE_ACCOUNT}\r\nBcc: eve@example.com`));
    expect(m.html).not.toMatch(/<script|onmouseover="|\u202E/);
    expect(m.html).toContain(
      'Eve &lt;script&gt;alert(1)&lt;/script&gt; &quot;q&#39; onmouseover=&quot;x&quot;',
    );
    // The text part and the subject have no markup, but no line break nor bidi override either.
    expect(`${m.subject}${m.text.replace(/\n/g, '')}`).not.toMatch(/[\r\n\u202E]/);
    expect(m.text).toContain('Eve <script>alert(1)</script> "q\' onmouseover="x" \uFFFDevil\uFFFD\uFFFDBcc');
  });

  it('name the product given, and never toolgate then', async () => {
    const m = await write(alert(window80), 'Example Tools');
    expect(m.subject.startsWith('[Example Tools] ')).toBe(true);
    expect(`${m.subject}${m.text}${m.html}`).not.toMatch(/toolgate/i);
  });

  it('write windows and times as words', () => {
    expect(['5h', '1w', '1d', '30m', 'odd'].map(windowWords)).toEqual([
      '5-hour',
      '1-week',
      '1-day',
      '30-minute',
      'odd',
    ]);
    expect(readableTime('2026-04-15T17:10:02Z')).toBe('2026-04-15 17:10 UTC');
  });
});
