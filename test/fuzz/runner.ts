/**
 * The seeding, replay and reporting switches of the fuzz properties, for a test file of its own:
 *   TOOLGATE_FUZZ_SEED=<seed>   the seed (a failure prints it)
 *   TOOLGATE_FUZZ_PATH=<path>   replay one shrunk counterexample (a failure prints it)
 *   TOOLGATE_FUZZ_SCALE=10      ten times the runs
 *   TOOLGATE_FUZZ_COLLECT=1     run every case and print each distinct failure instead of stopping at the first
 *   TOOLGATE_FUZZ_STATS=1       print what was answered how often
 */
import fc from 'fast-check';

export const SEED = Number(process.env.TOOLGATE_FUZZ_SEED ?? 20_260_415);
export const PATH = process.env.TOOLGATE_FUZZ_PATH;
export const SCALE = Number(process.env.TOOLGATE_FUZZ_SCALE ?? 1);
export const COLLECT = process.env.TOOLGATE_FUZZ_COLLECT === '1';
export const STATS = process.env.TOOLGATE_FUZZ_STATS === '1';

export const runs = (n: number) => Math.max(1, Math.round(n * SCALE));

export interface FuzzRun {
  /** Runs a property with the seed (and path); a failure names the property and the seed. */
  assertProperty<T>(name: string, property: fc.IAsyncProperty<T>, numRuns: number): Promise<void>;
  /** The predicate as is, or (TOOLGATE_FUZZ_COLLECT=1) one that records each distinct failure and goes on. */
  predicate<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void>;
  /** The property running now. */
  readonly current: string;
  /** Failures recorded with TOOLGATE_FUZZ_COLLECT=1: first line → count and one example. */
  readonly collected: Map<string, { count: number; example: string }>;
}

export function fuzzRun(): FuzzRun {
  let current = '';
  const collected = new Map<string, { count: number; example: string }>();
  return {
    get current() {
      return current;
    },
    collected,
    async assertProperty(name, property, numRuns) {
      current = name;
      try {
        await fc.assert(property, { seed: SEED, numRuns, ...(PATH === undefined ? {} : { path: PATH }) });
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        const cause = e instanceof Error && e.cause instanceof Error ? `\nCause: ${e.cause.message}` : '';
        throw new Error(`Property "${name}" failed with TOOLGATE_FUZZ_SEED=${SEED}.\n${message}${cause}`);
      }
    },
    predicate(fn) {
      if (!COLLECT) return fn;
      return async (...args) => {
        try {
          await fn(...args);
        } catch (e) {
          const message = e instanceof Error ? e.message : String(e);
          const key = `${current}: ${message.split('\n')[0]}`;
          const seen = collected.get(key);
          if (seen) seen.count++;
          else
            collected.set(key, {
              count: 1,
              example: `${message}\nspec: ${JSON.stringify(args).slice(0, 2_000)}`,
            });
        }
      };
    },
  };
}
