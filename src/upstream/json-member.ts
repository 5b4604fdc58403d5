/**
 * @module The text of one member of a JSON object, found by scanning the JSON text it came from.
 * A catalogue tool's `results` go out as its upstream wrote them: its answer is parsed once (to check
 * it and count its records) and never serialised again, which costs a large answer as much CPU as the
 * parse did. Only for text that JSON.parse has accepted as an object: the scan follows the
 * structure, it does not check it.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(text: string, i: number): number {
  while (isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** The index just past the string whose opening quote is at `i`; -1 if it never closes. */
function stringEnd(text: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return -1;
    // Escaped when an odd number of backslashes precede it.
    let b = q - 1;
    while (text.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** The index just past the value that starts at `i`; -1 if it does not end. */
function valueEnd(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return stringEnd(text, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text.charCodeAt(j);
      if (d === QUOTE) {
        const end = stringEnd(text, j);
        if (end < 0) return -1;
        j = end - 1;
      } else if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if ((d === CLOSE_BRACE || d === CLOSE_BRACKET) && --depth === 0) return j + 1;
    }
    return -1;
  }
  // A number, true, false or null: up to whatever follows it.
  let j = i;
  for (; j < text.length; j++) {
    const d = text.charCodeAt(j);
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d)) break;
  }
  return j > i ? j : -1;
}

/** Whether the key whose quotes are at `start` and `end - 1` is written with an escape. */
function hasEscape(text: string, start: number, end: number): boolean {
  for (let j = start + 1; j < end - 1; j++) if (text.charCodeAt(j) === BACKSLASH) return true;
  return false;
}

/**
 * The JSON text of the member `name` of the object `text` holds, as written there (spacing
 * included), or undefined when the object has no such member or the scan cannot be sure which one
 * JSON.parse took (a key written with escapes, such as `"res\u0075lts"`: the caller then serialises
 * the parsed value instead). Of duplicated keys the last counts, as in JSON.parse.
 */
export function memberJson(text: string, name: string): string | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) return undefined;
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return undefined;
  let found = -1;
  let foundEnd = -1;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return undefined;
    const named = keyEnd - i - 2 === name.length && text.startsWith(name, i + 1);
    if (!named && hasEscape(text, i, keyEnd)) return undefined;
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) return undefined;
    const start = skipSpace(text, i + 1);
    const end = valueEnd(text, start);
    if (end < 0) return undefined;
    if (named) {
      found = start;
      foundEnd = end;
    }
    i = skipSpace(text, end);
    const c = text.charCodeAt(i);
    if (c === CLOSE_BRACE) break;
    if (c !== COMMA) return undefined;
    i = skipSpace(text, i + 1);
  }
  return found < 0 ? undefined : text.slice(found, foundEnd);
}
