/**
 * @module A catalogue tool's upstream headers: which names and values HTTP can carry, and which
 * `${NAME}` placeholders a catalogue may name (only what the operator listed in
 * TOOLGATE_UPSTREAM_ENV, never toolgate's own configuration), checked at import and again where a
 * server resolves them, for a catalogue written into the database past the import.
 */

export const MAX_HEADER_VALUE = 8192;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const SET_BY_TOOLGATE =
  /^(content-type|content-length|host|connection|transfer-encoding|x-request-id|x-toolgate-.*)$/i;
const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
/** What undici sends as is: anything else (ESC, a BOM, a surrogate, a tab) fails every call. */
const VISIBLE_ASCII = /^[\x20-\x7e]*$/;
/**
 * Variables toolgate, its database driver or Node.js read, and database or Redis credentials: never
 * a catalogue's, even when TOOLGATE_UPSTREAM_ENV lists them. Case-insensitive, as Windows' environment is.
 */
const OWN_VARIABLE = /^(TOOLGATE_.*|PG.*|NODE_.*|UV_.*|HOST|PORT|LOG_LEVEL|.*(DATABASE|POSTGRES|REDIS).*)$/i;
// biome-ignore lint/suspicious/noTemplateCurlyInString: the reason shows the placeholder syntax.
const MALFORMED = 'has a malformed placeholder: write ${NAME}, NAME of A-Z, a-z, 0-9, "_", not a digit first';

/** Whether `name` is toolgate's own configuration (or its drivers'), which no catalogue may read. */
export function isOwnVariable(name: string): boolean {
  return OWN_VARIABLE.test(name);
}

/** The variables a catalogue may name: those TOOLGATE_UPSTREAM_ENV lists, less toolgate's own. */
export function allowedVariables(upstreamEnv: readonly string[]): ReadonlySet<string> {
  return new Set(upstreamEnv.filter((name) => !isOwnVariable(name)));
}

/** Why a catalogue may not name `variable`, with the fix; undefined when it may. */
function notAllowed(variable: string, allowed: ReadonlySet<string>): string | undefined {
  if (isOwnVariable(variable))
    return `names \${${variable}}, toolgate's own configuration (TOOLGATE_*, PG*, database and Redis variables), which a catalogue can never read: give the upstream's credential a variable of its own and list it in TOOLGATE_UPSTREAM_ENV`;
  if (!allowed.has(variable))
    return `names \${${variable}}, which TOOLGATE_UPSTREAM_ENV does not list: add it there (comma-separated names, for example TOOLGATE_UPSTREAM_ENV=${variable}) where the catalogue is imported and on every server`;
  return undefined;
}

/** Why a header of this name cannot be configured; undefined when it can. */
export function headerNameProblem(name: string): string | undefined {
  if (!HEADER_NAME.test(name)) return 'is not a valid HTTP header name';
  if (SET_BY_TOOLGATE.test(name)) return 'is set by toolgate and cannot be configured';
  return undefined;
}

/** Every reason a header value, as written in a catalogue, is refused. */
export function headerValueProblems(raw: string, allowed: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  if (!VISIBLE_ASCII.test(raw))
    problems.push('must be visible ASCII and spaces: no control character, byte-order mark or non-ASCII');
  if (raw.length > MAX_HEADER_VALUE) problems.push(`must be at most ${MAX_HEADER_VALUE} characters`);
  if (raw.replace(PLACEHOLDER, '').includes('${')) problems.push(MALFORMED);
  for (const variable of placeholders(raw)) {
    const why = notAllowed(variable, allowed);
    if (why) problems.push(why);
  }
  return problems;
}

/** The `${NAME}` placeholders of one header value, once each. */
function placeholders(value: string): string[] {
  return [...new Set(Array.from(value.matchAll(PLACEHOLDER), (m) => m[1]!))];
}

/** The `${NAME}` placeholders in header values, once each, in order. */
export function headerVariables(headers: Readonly<Record<string, string>>): string[] {
  return [...new Set(Object.values(headers).flatMap(placeholders))];
}

/**
 * Why stored headers cannot be sent, named without a value: variables they may not read
 * (`not_allowed`: a catalogue written into the database, past the import's check), headers HTTP
 * cannot carry as written (`headers`), variables unset here (`missing`), or set to what a header
 * cannot carry (`not_ascii`: CR or LF would inject headers, ESC or a BOM would fail every call).
 */
export interface HeaderProblem {
  reason: 'not_allowed' | 'headers' | 'missing' | 'not_ascii';
  names: string[];
}

/**
 * The headers with every ${NAME} replaced from `env`, reading only `allowed` variables; or the
 * first kind of problem, with every name of that kind. A variable not allowed is never read.
 */
export function resolveHeaderValues(
  headers: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string | undefined>>,
  allowed: ReadonlySet<string>,
): { ok: true; headers: Record<string, string> } | ({ ok: false } & HeaderProblem) {
  const variables = headerVariables(headers);
  const forbidden = variables.filter((name) => notAllowed(name, allowed) !== undefined);
  if (forbidden.length > 0) return { ok: false, reason: 'not_allowed', names: forbidden };
  const unfit = Object.entries(headers)
    .filter(([name, value]) => headerNameProblem(name) !== undefined || !VISIBLE_ASCII.test(value))
    .map(([name]) => name);
  if (unfit.length > 0) return { ok: false, reason: 'headers', names: unfit };
  const missing = variables.filter((name) => env[name] === undefined);
  if (missing.length > 0) return { ok: false, reason: 'missing', names: missing };
  const notAscii = variables.filter((name) => !VISIBLE_ASCII.test(env[name]!));
  if (notAscii.length > 0) return { ok: false, reason: 'not_ascii', names: notAscii };
  const resolved: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    resolved[name] = value.replace(PLACEHOLDER, (_, variable: string) => env[variable] ?? '');
  return { ok: true, headers: resolved };
}
