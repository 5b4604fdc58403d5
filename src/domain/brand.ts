/**
 * @module The operator's brand: the name customers and agents see (console, mails, the consent
 * page, OAuth's resource metadata, MCP's serverInfo), an optional logo, accent colour and support
 * address. toolgate's own name appears only where no brand is set.
 */

export interface BrandLogo {
  type: 'image/svg+xml' | 'image/png';
  bytes: Buffer;
}

export interface Brand {
  name: string;
  /** An email address or an https URL, shown in footers and mails; null: none. */
  support: string | null;
  /** The accent colour, `#rrggbb`; null: the console's own. */
  color: string | null;
  logo: BrandLogo | null;
}

export const DEFAULT_BRAND: Brand = Object.freeze({
  name: 'toolgate',
  support: null,
  color: null,
  logo: null,
});

/** A name for config keys and ids (an MCP client's server entry): `Acme Data` -> `acme-data`. */
export function brandSlug(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return slug === '' ? 'tools' : slug;
}

/** The support address as a link target: `mailto:` for an email. */
export function supportHref(support: string): string {
  return support.includes('@') && !support.includes('://') ? `mailto:${support}` : support;
}
