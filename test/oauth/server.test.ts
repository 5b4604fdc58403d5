/** The serving process turns OAuth on with the console, at TOOLGATE_PUBLIC_URL or the address it listens on. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type Running, startServer } from '../../src/server.js';
import { KEY_SECRET, scratchDir } from '../helpers.js';

describe('startServer with the console on', () => {
  const dir = scratchDir();
  let server: Running;
  beforeAll(async () => {
    server = await startServer(
      loadConfig({
        TOOLGATE_DATABASE_URL: `sqlite:${dir.dir}/t.db`,
        PORT: '0',
        TOOLGATE_KEY_SECRET: KEY_SECRET,
        TOOLGATE_PUBLIC_URL: 'https://tools.example.com/',
        LOG_LEVEL: 'error',
        NODE_ENV: 'production',
      }),
    );
  });
  afterAll(async () => {
    await server?.close();
    dir.cleanup();
  });

  it('serves both metadata documents for the public URL and points /mcp 401s at them', async () => {
    const prm = (await (await fetch(`${server.url}/.well-known/oauth-protected-resource`)).json()) as Record<
      string,
      unknown
    >;
    expect(prm).toMatchObject({
      resource: 'https://tools.example.com/mcp',
      authorization_servers: ['https://tools.example.com'],
    });
    const as = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(as).toMatchObject({
      issuer: 'https://tools.example.com',
      authorization_endpoint: 'https://tools.example.com/oauth/authorize',
      token_endpoint: 'https://tools.example.com/oauth/token',
      registration_endpoint: 'https://tools.example.com/oauth/register',
      revocation_endpoint: 'https://tools.example.com/oauth/revoke',
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
    const mcp = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toBe(
      'Bearer resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/mcp"',
    );
  });
});
