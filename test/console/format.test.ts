/**
 * The console's pure helpers: the one time formatter (its zone always said, the same on every
 * server), the Connect page's example arguments and server name, and the Usage page's periods.
 */
import { describe, expect, it } from 'vitest';
import { mcpServerName, snippets } from '../../src/console/connect-snippets.js';
import { formatDay, formatHour, formatTime } from '../../src/console/format.js';
import { exampleArguments, exampleCall, toolText } from '../../src/console/pages/connect.js';
import { chosenDay, periodDays, periodOf } from '../../src/console/usage-model.js';

describe('the console’s time formatter', () => {
  it('writes times with their zone, days and hours, whatever the ICU data says', () => {
    expect(formatTime('2026-11-29T03:40:12Z')).toBe('29 Nov 2026, 03:40 UTC');
    expect(formatTime(Date.UTC(2026, 8, 1, 23, 5) / 1000)).toBe('1 Sep 2026, 23:05 UTC');
    expect(formatDay('2026-11-29')).toBe('29 Nov 2026');
    expect(formatDay('2026-11-29', true)).toBe('Sun 29 Nov 2026');
    expect(formatHour(23)).toBe('23:00\u201300:00 UTC');
    // Not a time: shown as given, never "Invalid Date".
    expect(formatTime('soon')).toBe('soon');
    expect(formatDay('2026-13-45')).toBe('2026-13-45');
  });
});

describe('the Connect page’s examples', () => {
  it('makes example arguments: required ones, and optional ones whose schema names a value', () => {
    const schema = {
      type: 'object',
      properties: {
        title: { type: 'string', minLength: 1 },
        limit: { type: 'integer', minimum: 5, maximum: 100 },
        email: { type: 'string', format: 'email' },
        period: { enum: ['today', 'week'] },
        verbose: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string', examples: ['ai'] } },
      },
      required: ['title', 'limit', 'email', 'tags'],
    };
    expect(exampleArguments(schema)).toEqual({
      title: '<title>',
      limit: 5,
      email: 'name@example.com',
      period: 'today',
      tags: ['ai'],
    });
    expect(exampleArguments({ type: 'object', properties: {} })).toEqual({});
    // A quote in an example stays inside the shell's quotes.
    expect(exampleCall('https://t.example', 'x', { q: "it's" })).toContain(`-d '{"q":"it'\\''s"}'`);
  });

  it('says a tool’s summary and description once each', () => {
    const metered = 'Metered: search; 0 tokens per call, 1 per record.';
    expect(toolText('Find people.', `Find people.\n\n${metered}`)).toEqual({
      summary: 'Find people.',
      paragraphs: [metered],
    });
    expect(toolText('Find people.', `Find people.\nBy title, at most 100.\n\n${metered}`)).toEqual({
      summary: 'Find people.',
      paragraphs: ['By title, at most 100.', metered],
    });
    const long = 'x'.repeat(150);
    expect(toolText(long.slice(0, 120), long)).toEqual({ summary: '', paragraphs: [long] });
    expect(toolText('Details of the account', 'Returns the account.')).toEqual({
      summary: 'Details of the account',
      paragraphs: ['Returns the account.'],
    });
  });

  it('names the server after the public host, and writes each client’s format', () => {
    expect(mcpServerName('https://tools.example.com')).toBe('tools-example-com');
    expect(mcpServerName('http://127.0.0.1:3000')).toBe('tools');
    expect(mcpServerName('http://[::1]:3000')).toBe('tools');
    const s = snippets('https://tools.example.com/mcp', 'tools-example-com');
    expect(s.claudeCode).toBe(
      'claude mcp add --transport http tools-example-com https://tools.example.com/mcp \\\n  --header "Authorization: Bearer <your API key>"',
    );
    expect(JSON.parse(s.cursor).mcpServers['tools-example-com'].url).toBe('https://tools.example.com/mcp');
    const vscode = JSON.parse(s.vscode);
    expect(vscode.servers['tools-example-com']).toMatchObject({
      type: 'http',
      url: 'https://tools.example.com/mcp',
    });
    expect(vscode.inputs[0]).toMatchObject({ type: 'promptString', id: 'api-key', password: true });
  });
});

describe('the Usage page’s periods', () => {
  it('offers this billing period only when there is one, and days of the last week by the hour', () => {
    expect(periodOf('billing', null)).toBe('30');
    expect(periodOf('billing', '2026-11-03')).toBe('billing');
    expect(periodOf('365', null)).toBe('30');
    expect(periodDays('7', '2026-11-29', null)).toEqual({ from: '2026-11-23', to: '2026-11-29' });
    expect(periodDays('90', '2026-11-29', null)).toEqual({ from: '2026-09-01', to: '2026-11-29' });
    expect(periodDays('billing', '2026-11-29', '2026-11-03')).toEqual({
      from: '2026-11-03',
      to: '2026-11-29',
    });
    expect(chosenDay('2026-11-23', '2026-11-29')).toBe('2026-11-23');
    expect(chosenDay('2026-11-22', '2026-11-29')).toBe('2026-11-29');
  });
});
