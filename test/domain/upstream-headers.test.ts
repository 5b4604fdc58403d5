// biome-ignore-all lint/suspicious/noTemplateCurlyInString: header placeholders are written as ${NAME} literals.
/** Which `${NAME}` a catalogue may read (TOOLGATE_UPSTREAM_ENV, never toolgate's own) and which header values HTTP can carry. */
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../../src/config.js';
import { parseTool } from '../../src/domain/catalogue.js';
import { allowedVariables, isOwnVariable, resolveHeaderValues } from '../../src/domain/upstream-headers.js';
import { bearer } from '../calls.js';

describe('variables holding what a header cannot carry', () => {
  it.each([
    ['CR LF', 'a\nB: c'],
    ['NUL', 'a\0'],
    ['ESC', '\u001b[2J'],
    ['a BOM', '\ufefft0k'],
    ['a lone surrogate', 't0k\udc00'],
    ['a tab', 't\t0k'],
    ['DEL', 't0k\u007f'],
    ['non-ASCII', 'caf\u00e9'],
  ])('a variable holding %s is named as unusable, never substituted', (_what, value) => {
    const headers = { Authorization: bearer('${TOKEN}'), 'X-User': '${USER}' };
    expect(
      resolveHeaderValues(headers, { TOKEN: value, USER: 'ann' }, allowedVariables(['TOKEN', 'USER'])),
    ).toEqual({
      ok: false,
      reason: 'not_ascii',
      names: ['TOKEN'],
    });
  });
});

describe('placeholders and TOOLGATE_UPSTREAM_ENV', () => {
  const headerProblems = (headers: Record<string, string>, listed: string[]) => {
    const result = parseTool('ping', { upstream: { url: 'http://x/', headers } }, listed);
    return result.ok ? [] : result.problems.map((p) => `${p.path}: ${p.reason}`);
  };

  it('refuses a variable TOOLGATE_UPSTREAM_ENV does not list, naming it and the fix', () => {
    expect(headerProblems({ Authorization: bearer('${CRM_TOKEN}') }, [])).toEqual([
      '/upstream/headers/Authorization: names ${CRM_TOKEN}, which TOOLGATE_UPSTREAM_ENV does not list: add it there (comma-separated names, for example TOOLGATE_UPSTREAM_ENV=CRM_TOKEN) where the catalogue is imported and on every server',
    ]);
    expect(headerProblems({ Authorization: bearer('${CRM_TOKEN}') }, ['CRM_TOKEN', 'OTHER'])).toEqual([]);
    // Names are exact: another case is another variable.
    expect(headerProblems({ Authorization: bearer('${crm_token}') }, ['CRM_TOKEN'])).toHaveLength(1);
  });

  it.each([
    'TOOLGATE_ADMIN_TOKEN',
    'TOOLGATE_KEY_SECRET',
    'TOOLGATE_DATABASE_URL',
    'TOOLGATE_REDIS_URL',
    'toolgate_admin_token',
    'DATABASE_URL',
    'REDIS_URL',
    'REDIS_PASSWORD',
    'HEROKU_POSTGRESQL_RED_URL',
    'PGPASSWORD',
    'PGHOST',
    'NODE_OPTIONS',
    'HOST',
    'PORT',
  ])('refuses ${%s} even when TOOLGATE_UPSTREAM_ENV lists it', (variable) => {
    expect(headerProblems({ 'X-A': `k=\${${variable}}` }, [variable])).toEqual([
      `/upstream/headers/X-A: names \${${variable}}, toolgate's own configuration (TOOLGATE_*, PG*, database and Redis variables), which a catalogue can never read: give the upstream's credential a variable of its own and list it in TOOLGATE_UPSTREAM_ENV`,
    ]);
    expect(allowedVariables([variable, 'CRM_TOKEN'])).toEqual(new Set(['CRM_TOKEN']));
  });

  it("counts every variable toolgate's configuration reads as its own", () => {
    expect(CONFIG_VARIABLES).toContain('TOOLGATE_UPSTREAM_ENV');
    for (const name of CONFIG_VARIABLES) expect([name, isOwnVariable(name)]).toEqual([name, true]);
    for (const name of ['EXAMPLE_UPSTREAM_TOKEN', 'CRM_TOKEN', 'PEOPLE_API_TOKEN', 'API_KEY'])
      expect([name, isOwnVariable(name)]).toEqual([name, false]);
  });

  it('resolves stored headers only with allowed variables, never reading one that is not', () => {
    const env = { TOOLGATE_ADMIN_TOKEN: 'admin-secret', CRM_TOKEN: 'crm', OTHER: 'other' };
    const allowed = allowedVariables(['CRM_TOKEN', 'TOOLGATE_ADMIN_TOKEN']);
    expect(
      resolveHeaderValues({ 'X-A': '${TOOLGATE_ADMIN_TOKEN}', 'X-B': '${OTHER}${CRM_TOKEN}' }, env, allowed),
    ).toEqual({ ok: false, reason: 'not_allowed', names: ['TOOLGATE_ADMIN_TOKEN', 'OTHER'] });
    expect(resolveHeaderValues({ 'X-B': bearer('${CRM_TOKEN}') }, env, allowed)).toEqual({
      ok: true,
      headers: { 'X-B': bearer('crm') },
    });
    // Values and names as written that HTTP cannot carry: named, whatever the environment holds.
    expect(
      resolveHeaderValues({ 'X-E': 'a\u001bb', 'X-F': '\ufeff', 'Bad Name': 'x', Host: 'h' }, env, allowed),
    ).toEqual({ ok: false, reason: 'headers', names: ['X-E', 'X-F', 'Bad Name', 'Host'] });
  });
});

describe('TOOLGATE_UPSTREAM_ENV in the configuration', () => {
  it('is a comma-separated list of names, empty when unset', () => {
    expect(loadConfig({}).upstreamEnv).toEqual([]);
    expect(loadConfig({ TOOLGATE_UPSTREAM_ENV: 'EXAMPLE_UPSTREAM_TOKEN' }).upstreamEnv).toEqual([
      'EXAMPLE_UPSTREAM_TOKEN',
    ]);
    expect(loadConfig({ TOOLGATE_UPSTREAM_ENV: 'CRM_TOKEN, _X1,people_key' }).upstreamEnv).toEqual([
      'CRM_TOKEN',
      '_X1',
      'people_key',
    ]);
  });

  it.each(['CRM_TOKEN;X', '1ABC', 'A,,B', 'A-B', '${A}'])('refuses %j with the hint', (value) => {
    expect(() => loadConfig({ TOOLGATE_UPSTREAM_ENV: value })).toThrow(ConfigError);
    expect(() => loadConfig({ TOOLGATE_UPSTREAM_ENV: value })).toThrow(
      /TOOLGATE_UPSTREAM_ENV must be environment variable names separated by commas/,
    );
  });
});
