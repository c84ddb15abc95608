/**
 * Page sizes and their defaults live in src/domain/pages.ts; schema.graphql states the same
 * defaults for its readers (introspection, the console's codegen). Every integer argument default
 * of the schema is one of PAGES' defaults, named here, so that changing one without the other fails;
 * the MCP tools publish their page sizes' bounds and defaults from PAGES too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildSchema, isObjectType, isScalarType, getNamedType } from 'graphql';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { PAGES, type Bound } from '../../src/domain/pages';
import type { McpContext } from '../../src/mcp/context';
import { createMcpServer } from '../../src/mcp/server';
import { ROOT } from '../support/paths';

const EXPECTED: Record<string, number> = {
  'Query.sessions.limit': PAGES.sessions.def,
  'Query.sessionsConnection.first': PAGES.sessions.def,
  'Query.searchSessions.limit': PAGES.search.def,
  'Query.searchSessions.offset': PAGES.searchOffset.def,
  'Query.sessionFacets.limit': PAGES.facets.def,
  'Project.sessions.limit': PAGES.sessions.def,
  'Project.sessionsConnection.first': PAGES.sessions.def,
  'ProjectStats.sessionsByDay.days': PAGES.days.def,
  'ProjectStats.topTags.limit': PAGES.topValues.def,
  'Session.exchanges.offset': PAGES.exchangeOffset.def,
  'Session.exchanges.limit': PAGES.exchanges.def,
  'Session.related.limit': PAGES.related.def,
  'Stats.topLLMModels.limit': PAGES.topValues.def,
};

test("every integer argument default of schema.graphql is PAGES' default", () => {
  const schema = buildSchema(fs.readFileSync(path.resolve(ROOT, 'schema.graphql'), 'utf8'));
  const found: Record<string, unknown> = {};
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      for (const arg of field.args) {
        const named = getNamedType(arg.type);
        if (isScalarType(named) && named.name === 'Int' && arg.defaultValue !== undefined) found[`${type.name}.${field.name}.${arg.name}`] = arg.defaultValue;
      }
    }
  }
  expect(found).toEqual(EXPECTED);
});

test("every page size of the MCP tools is PAGES': its bounds and its stated default", async () => {
  // The tools as an agent lists them (tools/list over an in-process transport; listing runs no tool).
  const server = createMcpServer({ ctx: {} as McpContext['ctx'], origin: 'http://localhost' });
  const client = new Client({ name: 'page-defaults', version: '1.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  try {
    const { tools } = await client.listTools();
    const arg = (tool: string, name: string) => (tools.find((t) => t.name === tool)?.inputSchema.properties ?? {})[name] as Record<string, unknown>;
    const expected: Array<[string, string, Bound]> = [
      ['search_sessions', 'limit', PAGES.mcpSearch],
      ['read_exchanges', 'count', PAGES.mcpExchanges],
      ['gather_context', 'maxSessions', PAGES.mcpSessions],
      ['related_sessions', 'limit', PAGES.related],
    ];
    for (const [tool, name, bound] of expected) {
      const schema = arg(tool, name);
      expect({ tool, name, minimum: schema.minimum, maximum: schema.maximum }).toEqual({ tool, name, minimum: bound.min, maximum: bound.max });
      expect(schema.description).toContain(`(${bound.min}-${bound.max}, default ${bound.def})`);
    }
  } finally {
    await client.close();
    await server.close();
  }
});
