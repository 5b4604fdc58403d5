import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppHarness, scratchApp } from '../helpers.js';

describe('GET /openapi.json', () => {
  let h: AppHarness;
  let doc: any;
  beforeAll(async () => {
    h = await scratchApp();
    const res = await h.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(async () => h.close());

  it('is an OpenAPI 3.1 document with the bearer scheme', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('describes get_account as the spec does: an empty object in, results/status/metadata out', () => {
    const op = doc.paths['/api/v1/tools/get_account'].post;
    expect(op.operationId).toBe('get_account');
    expect(op.security).toEqual([{ bearerAuth: [] }]);
    const body = op.requestBody.content['application/json'].schema;
    expect(body).toMatchObject({ type: 'object', additionalProperties: false });
    expect(body.properties ?? {}).toEqual({});
    const ok = op.responses['200'].content['application/json'].schema;
    expect(Object.keys(ok.properties)).toEqual(['results', 'status', 'metadata']);
    const results = ok.properties.results;
    expect(Object.keys(results.properties).sort()).toEqual(
      [
        'api_key_count',
        'created_at',
        'fair_use',
        'id',
        'name',
        'plan',
        'status',
        'token_balance',
        'unlimited',
        'user_count',
      ].sort(),
    );
    expect(results.properties.token_balance.type).toBe('integer');
    expect(results.properties.unlimited.type).toBe('boolean');
    const enrich = results.properties.fair_use.properties.enrich.properties;
    expect(Object.keys(enrich.records.properties)).toEqual(['5h', '1w']);
    expect(Object.keys(enrich.requests.properties)).toEqual(['5h']);
    expect(Object.keys(enrich.records.properties['5h'].properties)).toEqual([
      'limit',
      'used',
      'remaining',
      'resets_at',
    ]);
    expect(Object.keys(ok.properties.metadata.properties.fair_use.properties)).toEqual([
      'records_remaining_5h',
      'records_reset_5h',
      'records_remaining_1w',
      'records_reset_1w',
    ]);
    expect(op.responses['4XX'] ?? op.responses['4xx']).toBeDefined();
  });

  it('lists the admin API and health, and hides internal catch-all routes', () => {
    const paths = Object.keys(doc.paths);
    expect(paths).toContain('/admin/v1/accounts');
    expect(paths).toContain('/admin/v1/accounts/{id}/usage');
    expect(paths).toContain('/healthz');
    expect(paths).not.toContain('/api/v1/tools/{tool}');
    expect(paths).not.toContain('/openapi.json');
  });
});

describe('GET /', () => {
  it('points a person at the OpenAPI document and the docs, without credentials', async () => {
    const h = await scratchApp();
    try {
      const res = await h.app.inject({ method: 'GET', url: '/' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const body = res.json();
      expect(body).toMatchObject({ service: 'toolgate', openapi: '/openapi.json', health: '/healthz' });
      expect(body.docs).toContain('docs/api.md');
      // What it points at is there.
      expect((await h.app.inject({ method: 'GET', url: body.openapi })).statusCode).toBe(200);
    } finally {
      await h.close();
    }
  });
});
