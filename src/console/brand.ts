/**
 * @module The brand on the console: what the layout names (name, support link, whether there is a
 * logo), and the two files it links to: the logo, and a stylesheet that sets the accent colour
 * (a file, since the Content-Security-Policy allows no inline style).
 */
import type { FastifyInstance } from 'fastify';
import { type Brand, supportHref } from '../domain/brand.js';

/** The brand as every page's layout reads it (Eta's default context). */
export interface BrandView {
  name: string;
  support: { text: string; href: string } | null;
  logo: boolean;
  color: boolean;
}

export const brandView = (brand: Brand): BrandView => ({
  name: brand.name,
  support: brand.support ? { text: brand.support, href: supportHref(brand.support) } : null,
  logo: brand.logo !== null,
  color: brand.color !== null,
});

/** The accent and its darker shade (links on hover, the current page's underline). */
export function brandCss(color: string): string {
  const dark = `#${[1, 3, 5]
    .map((i) => Math.round(Number.parseInt(color.slice(i, i + 2), 16) * 0.6))
    .map((v) => v.toString(16).padStart(2, '0'))
    .join('')}`;
  return `:root {\n  --accent: ${color};\n  --accent-dark: ${dark};\n}\n`;
}

export async function brandRoutes(app: FastifyInstance, opts: { brand: Brand }): Promise<void> {
  const { logo, color } = opts.brand;
  if (logo)
    app.get('/brand/logo', { schema: { hide: true } }, async (_request, reply) =>
      reply
        .type(logo.type)
        .header('cache-control', 'public, max-age=3600')
        // An SVG opened on its own runs no script and loads nothing (it may hold either).
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
        .send(logo.bytes),
    );
  if (color) {
    const css = brandCss(color);
    app.get('/brand.css', { schema: { hide: true } }, async (_request, reply) =>
      reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(css),
    );
  }
}
