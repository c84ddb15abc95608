/**
 * Every page-size bound and default of the front doors, in one place. `def` is the size when the
 * client sends none: REST's query parameters, GraphQL's resolvers and the MCP tools read it here,
 * and the same numbers stand as the argument defaults in schema.graphql and in the MCP tools'
 * published input schemas (test/sessions/page-defaults.test.ts holds them together).
 */
export interface Bound {
  min: number;
  max: number;
  def: number;
}

/** Every `limit` / `first` argument of GraphQL (checked before execution, src/graphql/operation-limits.ts). */
export const GRAPHQL_PAGE = { min: 1, max: 200 } as const;

export const PAGES = {
  /** GraphQL `sessions(limit)`, `sessionsConnection(first)` and their Project counterparts. */
  sessions: { ...GRAPHQL_PAGE, def: 20 },
  /** REST GET /projects/{id}/sessions. */
  projectSessions: { min: 1, max: 1000, def: 200 },
  /** REST GET /sessions/recent. */
  recentSessions: { min: 1, max: 100, def: 5 },
  /** The paged read by exchange; GraphQL's `Session.exchanges` is also held to GRAPHQL_PAGE. */
  exchanges: { min: 1, max: 1000, def: 20 },
  /** Exchanges skipped before a page. */
  exchangeOffset: { min: 0, max: 10_000_000, def: 0 },
  /** searchSessions results (and the upload CLI's resume search, a page at a time). */
  search: { min: 1, max: 200, def: 10 },
  /** Results skipped before a page of searchSessions. */
  searchOffset: { min: 0, max: Number.MAX_SAFE_INTEGER, def: 0 },
  /** Stats.topLLMModels and ProjectStats.topTags. */
  topValues: { ...GRAPHQL_PAGE, def: 10 },
  /** Values per facet of sessionFacets. */
  facets: { min: 1, max: 200, def: 50 },
  /** ProjectStats.sessionsByDay. */
  days: { min: 1, max: 366, def: 30 },
  /** MCP search_sessions `limit`: results per page. */
  mcpSearch: { min: 1, max: 20, def: 8 },
  /** MCP read_exchanges `count`: exchanges per read. */
  mcpExchanges: { min: 1, max: 10, def: 3 },
  /** MCP gather_context `maxSessions`: sessions excerpts are taken from. */
  mcpSessions: { min: 1, max: 10, def: 5 },
  /** Related sessions (GraphQL `Session.related`, REST …/related, MCP related_sessions). */
  related: { min: 1, max: 20, def: 5 },
  /** REST GET /audit: entries per page. */
  audit: { min: 1, max: 500, def: 50 },
} as const satisfies Record<string, Bound>;
