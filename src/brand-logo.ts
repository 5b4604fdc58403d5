/** @module The brand's logo file (TOOLGATE_BRAND_LOGO), read once at start: an SVG or a PNG of at most 256 KiB. */
import { readFileSync } from 'node:fs';
import { ConfigError } from './config.js';
import type { BrandLogo } from './domain/brand.js';

const MAX_LOGO_BYTES = 256 * 1024;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function readBrandLogo(path: string): BrandLogo {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ConfigError(`TOOLGATE_BRAND_LOGO names ${path}, which cannot be read (${code})`);
  }
  if (bytes.length > MAX_LOGO_BYTES)
    throw new ConfigError(
      `TOOLGATE_BRAND_LOGO ${path} is ${bytes.length} bytes: a logo is at most ${MAX_LOGO_BYTES} (256 KiB)`,
    );
  if (bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return { type: 'image/png', bytes };
  if (/<svg[\s>]/i.test(bytes.subarray(0, 4096).toString('utf8'))) return { type: 'image/svg+xml', bytes };
  throw new ConfigError(`TOOLGATE_BRAND_LOGO ${path} is neither an SVG nor a PNG file`);
}
