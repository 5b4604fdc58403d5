/**
 * @module The browser side of the console's browser test: Debian's chromium driven by
 * playwright-core (never a downloaded browser), a screenshot per page, axe-core run in each page,
 * and moving by keyboard alone.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { ROOT } from '../e2e/process.js';

export const CHROMIUM = '/usr/bin/chromium';
export const SHOTS = join(ROOT, 'test-results', 'console');

/**
 * Whether the browser test can run: chromium is installed, or the run is told it must be
 * (TOOLGATE_REQUIRE_BROWSER=1, as in CI), in which case a missing one fails instead of skipping.
 */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.TOOLGATE_REQUIRE_BROWSER === '1')
    throw new Error(`TOOLGATE_REQUIRE_BROWSER=1 but ${CHROMIUM} is missing: apt-get install chromium`);
  process.stderr.write(
    `\n${'!'.repeat(78)}\n!! ${CHROMIUM} is missing: the console's browser test is SKIPPED.\n!! apt-get install chromium, or set TOOLGATE_REQUIRE_BROWSER=1 to fail instead.\n${'!'.repeat(78)}\n\n`,
  );
  return false;
}

export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

const axeSource = readFileSync(
  join(createRequire(import.meta.url).resolve('axe-core'), '..', 'axe.min.js'),
  'utf8',
);

export interface AxeViolation {
  page: string;
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(page: Page, name: string): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol: the console's CSP (rightly) refuses an inline script tag.
  await page.evaluate(axeSource);
  const found = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<any> } }).axe;
    const r = await axe.run();
    return (r.violations as any[]).map((v) => ({
      id: String(v.id),
      impact: v.impact ?? null,
      help: String(v.help),
      targets: (v.nodes as any[]).map((n) => JSON.stringify(n.target)),
    }));
  });
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ page: name, ...v }));
}

/** Full-page screenshot into test-results/console/<name>.png. */
export async function shoot(page: Page, name: string): Promise<string> {
  mkdirSync(SHOTS, { recursive: true });
  const path = join(SHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Presses Tab until `target` has the focus (from the top of the page), at most `max` times: proof
 * that a keyboard user reaches it, in the page's own tab order.
 */
export async function tabTo(page: Page, target: Locator, max = 40): Promise<void> {
  const handle = await target.elementHandle();
  if (!handle) throw new Error('tabTo: the target is not on the page');
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (await handle.evaluate((el) => el === (globalThis as any).document.activeElement)) return;
  }
  const focused = await page.evaluate(
    () => (globalThis as any).document.activeElement?.outerHTML.slice(0, 200) ?? 'nothing',
  );
  throw new Error(`${max} presses of Tab never focused the target (last focused: ${focused})`);
}

/**
 * Runs `act` (a click or key press that follows a link or submits a form) and waits for the page
 * it loads. `waitForLoadState()` after the act is a race: it answers at once for the page still
 * showing when the new one has not started loading yet.
 */
export async function navigating(page: Page, act: () => Promise<unknown>): Promise<void> {
  const loaded = page.waitForEvent('load');
  await act();
  await loaded;
}

/** The page's main text, whitespace folded. */
export async function mainText(page: Page): Promise<string> {
  const main = page.getByRole('main');
  const text =
    (await main.count()) > 0 ? await main.first().innerText() : await page.locator('body').innerText();
  return text.replace(/\s+/g, ' ');
}
