/**
 * @module JSON Pointers (RFC 6901) as catalogue tools use them: checked and compiled once, read on
 * every answer, and the record counts a metered tool is charged by.
 */

export function isPointer(value: string): boolean {
  return value === '' || (value.startsWith('/') && !/~(?![01])/.test(value));
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON Pointer's reference tokens, decoded once: what a tool reads every answer with. */
export type Pointer = readonly string[];

/** RFC 6901: a pointer's tokens ("" is none: the whole document), or undefined when it is none. */
export function compilePointer(pointer: string): Pointer | undefined {
  if (!isPointer(pointer)) return undefined;
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const CANONICAL_INDEX = /^(0|[1-9][0-9]*)$/;

/** RFC 6901: the value at `pointer` in `doc`, or undefined. "" is the whole document. */
export function pointerGet(doc: unknown, pointer: string | Pointer): unknown {
  const tokens = typeof pointer === 'string' ? compilePointer(pointer) : pointer;
  if (tokens === undefined) return undefined;
  let current = doc;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      // Only canonical indexes: "01", "-" or "1e0" name no element.
      if (!CANONICAL_INDEX.test(token)) return undefined;
      current = current[Number(token)];
    } else if (isObject(current)) {
      // Own members only, so "/__proto__" or "/constructor" never reach the prototype.
      current = Object.hasOwn(current, token) ? current[token] : undefined;
    } else return undefined;
  }
  return current;
}

function wholeCount(value: unknown): number | undefined {
  if (Array.isArray(value)) return value.length;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/**
 * Records an upstream answer holds at `pointer`: an array counts its length, an object 1, a
 * non-negative safe integer itself, null/absent 0. Anything else (a number too big to be exact,
 * negative or fractional, a string, a boolean) is NaN: no count at all, which the pipeline answers
 * as the upstream's error rather than guess one.
 */
export function countRecords(answer: unknown, pointer: string | Pointer): number {
  const value = pointerGet(answer, pointer);
  if (value === null || value === undefined) return 0;
  return wholeCount(value) ?? (isObject(value) ? 1 : Number.NaN);
}

/**
 * Expected records from the caller's arguments: the value at the pointer when it is a non-negative
 * safe integer (or an array: its length), else 0.
 */
export function expectedRecords(args: unknown, pointer: string | Pointer | null): number {
  return pointer === null ? 0 : (wholeCount(pointerGet(args, pointer)) ?? 0);
}
