/**
 * @module What the Connect page gives each agent to paste: the MCP settings of Claude Code, Cursor
 * and VS Code (an API key in a header), and the steps of the apps that connect by signing in
 * (claude.ai, Claude Desktop, ChatGPT: OAuth, no key). Formats as each client documents them:
 * `claude mcp add --transport http ... --header`, Cursor's `mcpServers` with `url` and `headers`,
 * VS Code's `servers` with `type: "http"` and a password prompt in `inputs` (so the key is asked
 * for, never written in the file).
 */

const KEY_PLACEHOLDER = '<your API key>';

/**
 * A name for the server in the agents' settings: the public host, made safe for every client; a
 * generic one for an address that names nothing (an IP address, localhost).
 */
export function mcpServerName(publicUrl: string): string {
  let host = '';
  try {
    host = new URL(publicUrl).hostname;
  } catch {
    // Not a URL: the generic name below.
  }
  if (host === 'localhost' || host.startsWith('[') || /^[\d.]+$/.test(host)) host = '';
  const name = host
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return name === '' ? 'tools' : name;
}

export interface Snippets {
  claudeCode: string;
  cursor: string;
  vscode: string;
}

export function snippets(mcpUrl: string, name: string): Snippets {
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  return {
    claudeCode: `claude mcp add --transport http ${name} ${mcpUrl} \\\n  --header "Authorization: Bearer ${KEY_PLACEHOLDER}"`,
    cursor: json({
      mcpServers: { [name]: { url: mcpUrl, headers: { Authorization: `Bearer ${KEY_PLACEHOLDER}` } } },
    }),
    vscode: json({
      servers: {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's own variable, written as is.
        [name]: { type: 'http', url: mcpUrl, headers: { Authorization: 'Bearer ${input:api-key}' } },
      },
      inputs: [{ type: 'promptString', id: 'api-key', description: 'API key', password: true }],
    }),
  };
}
