/**
 * The official MCP TypeScript SDK's client against a test app's /mcp: protocol revision as asked
 * (the client asks for its latest; for an older revision the initialize request is rewritten to
 * ask for it, as an older client would), a Bearer key, optionally a custom fetch (e.g. one that
 * spreads requests over several instances).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export const PROTOCOLS = ['2025-06-18', '2025-11-25'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export interface McpClient {
  client: Client;
  /** The protocol revision the server agreed to. */
  protocol: string | undefined;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult & { structuredContent?: any }>;
  close(): Promise<void>;
}

export async function connectMcp(url: string, token: string, opts: { protocol?: Protocol; fetch?: typeof fetch } = {}): Promise<McpClient> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  if (opts.protocol && opts.protocol !== '2025-11-25') {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const m = message as { method?: string; params?: { protocolVersion?: string } };
      if (m.method === 'initialize' && m.params) m.params.protocolVersion = opts.protocol;
      return send(message, options);
    };
  }
  const client = new Client({ name: 'session-archive-tests', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    protocol: transport.protocolVersion,
    call: (name, args = {}) => client.callTool({ name, arguments: args }) as Promise<CallToolResult & { structuredContent?: any }>,
    close: () => client.close(),
  };
}

/** Every tool the archive's MCP server offers, sorted: the archive's own and ChatGPT's search and fetch. */
export const MCP_TOOLS = [
  'fetch',
  'gather_context',
  'get_session',
  'list_projects',
  'list_sessions',
  'read_exchanges',
  'read_raw',
  'related_sessions',
  'search',
  'search_sessions',
];
