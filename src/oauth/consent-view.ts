/** @module The consent page's HTML: a view model in, escaped markup out (no logic beyond choosing what to show). */

export interface ConsentView {
  action: string;
  csrf: string;
  clientName: string;
  redirectHost: string;
  email: string;
  accounts: { id: string; name: string }[];
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · toolgate</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
fieldset{border:1px solid #ccc;padding:.75rem}button{font-size:1rem;padding:.5rem 1.25rem;margin-right:.5rem}</style>
</head><body><main>${body}</main></body></html>`;

export function consentPage(v: ConsentView): string {
  const accounts = v.accounts
    .map(
      (a, i) =>
        `<label><input type="radio" name="account_id" value="${escapeHtml(a.id)}"${i === 0 ? ' checked' : ''}> ${escapeHtml(a.name)} <small>(${escapeHtml(a.id)})</small></label><br>`,
    )
    .join('\n');
  return page(
    'Connect an app',
    `<h1>Connect <strong>${escapeHtml(v.clientName)}</strong>?</h1>
<p><strong>${escapeHtml(v.clientName)}</strong> asks to call toolgate's tools for you. After you allow it, it is sent back to <strong>${escapeHtml(v.redirectHost)}</strong>.</p>
<p>Signed in as ${escapeHtml(v.email)}.</p>
<form method="post" action="${escapeHtml(v.action)}">
<input type="hidden" name="_csrf" value="${escapeHtml(v.csrf)}">
<fieldset><legend>Account it acts for (its tools, limits and tokens)</legend>
${accounts}
</fieldset>
<p><button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button></p>
</form>`,
  );
}

export function noAccountPage(v: Omit<ConsentView, 'accounts'>): string {
  return page(
    'No account',
    `<h1>No account to connect</h1>
<p>${escapeHtml(v.email)} belongs to no toolgate account, so <strong>${escapeHtml(v.clientName)}</strong> cannot be connected.</p>
<form method="post" action="${escapeHtml(v.action)}">
<input type="hidden" name="_csrf" value="${escapeHtml(v.csrf)}">
<button type="submit" name="decision" value="deny">Deny</button></form>`,
  );
}

export function messagePage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`);
}
