/** @module The console's one escaper: every page (through Eta's autoEscape) and every mail's HTML part. */

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Text for HTML: markup characters escaped, and the invisible controls that reorder what follows
 * them on screen (bidi embeddings, overrides and isolates) shown as U+FFFD: a name must not make
 * the rest of a line read backwards.
 */
export function escapeHtml(value: unknown): string {
  return String(value)
    .replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!)
    .replace(/[\u202a-\u202e\u2066-\u2069]/g, '\ufffd');
}
