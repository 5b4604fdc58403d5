/**
 * The documentation's links between its own files: every relative link names a file that exists,
 * and every `#anchor` one of the target's headings (GitHub's slugs), so a renamed section cannot
 * leave a dead link behind.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const DOCS = [
  'README.md',
  'bench/README.md',
  'docs/admin-api.md',
  'docs/api.md',
  'docs/console.md',
  'docs/mcp.md',
  'docs/operations.md',
  'docs/payments.md',
  'docs/performance.md',
  'docs/security.md',
];

/** GitHub's heading anchors: lower case, punctuation but `-` and `_` dropped, spaces as `-`, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug);
    seen.set(slug, (n ?? -1) + 1);
    out.add(n === undefined ? slug : `${slug}-${n + 1}`);
  }
  return out;
}

describe('documentation links', () => {
  it('finds the links it is to check', () => {
    const links = DOCS.flatMap((doc) => [
      ...readFileSync(join(ROOT, doc), 'utf8').matchAll(/\]\(([^)\s]+)\)/g),
    ]);
    expect(links.filter(([, link]) => link!.includes('#')).length).toBeGreaterThan(20);
  });

  it.each(DOCS)('%s: every relative link reaches a file, and every anchor a heading', (doc) => {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    const dead: string[] = [];
    for (const [, link] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(link!)) continue; // http:, https:, mailto:
      const [path, anchor] = link!.split('#') as [string, string | undefined];
      const target = path === '' ? join(ROOT, doc) : normalize(join(ROOT, dirname(doc), path));
      if (!existsSync(target)) dead.push(`${link}: no such file`);
      else if (anchor && target.endsWith('.md') && !anchors(readFileSync(target, 'utf8')).has(anchor))
        dead.push(`${link}: no such heading`);
    }
    expect(dead).toEqual([]);
  });
});
