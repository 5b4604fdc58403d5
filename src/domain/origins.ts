/** @module Origins (`scheme://host[:port]`) in the one form two spellings of an origin share. */

/**
 * `scheme://host[:port]` in lower case with the scheme's default port dropped, the form two
 * spellings of one origin share; undefined for anything that is not an origin (`null`, a path, a
 * query, credentials, no host).
 */
export function normalOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  const pathless = url.pathname === '' || url.pathname === '/';
  if (!pathless || url.host === '' || url.search || url.hash || url.username || url.password)
    return undefined;
  return `${url.protocol}//${url.host}`.toLowerCase();
}
