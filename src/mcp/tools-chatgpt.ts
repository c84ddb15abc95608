/**
 * The two tools ChatGPT's connectors and deep research call by name, as OpenAI's MCP documentation
 * defines them: `search {query}` → `{results: [{id, title, url}]}` and `fetch {id}` → `{id, title,
 * text, url, metadata}`. An id is `<projectId>/<sessionId>` (each part URI-encoded); the text is
 * the session's exchanges as markdown within the usual 24,000-character budget. Read-only, through
 * the same services and access rule as the other tools.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { requireReadableSession } from '../services/access';
import { exchangePage } from '../services/exchanges';
import { searchSessions } from '../services/search';
import { sessionTitle } from '../services/sessions';
import { runTool, sessionUrl, ToolError, type McpContext } from './context';
import { BUDGET, cutChars } from './text';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const RESULTS = 10;
/** Exchanges a fetch reads at most (the budget usually ends it sooner). */
const FETCH_EXCHANGES = 200;

const idOf = (projectId: string, sessionId: string) => `${encodeURIComponent(projectId)}/${encodeURIComponent(sessionId)}`;

function partsOf(id: string): { projectId: string; sessionId: string } {
  const [p, s, ...rest] = id.split('/');
  try {
    if (p && s && rest.length === 0) return { projectId: decodeURIComponent(p), sessionId: decodeURIComponent(s) };
  } catch {
    // a malformed escape: not an id of ours
  }
  throw new ToolError('id: use an id from search (projectId/sessionId)');
}

const SEARCH = {
  title: 'Search',
  description:
    'Search the recorded coding sessions you can read (ranked, typo-tolerant). Returns ids to pass to fetch, with titles and console links. (search_sessions gives snippets and filters.)',
  inputSchema: z.object({
    query: z.string({ error: 'query is required' }).trim().min(1, { error: 'query is required' }).max(512).describe('What to look for.'),
  }),
  outputSchema: z.object({ results: z.array(z.object({ id: z.string(), title: z.string(), url: z.string() })) }),
  annotations: READ_ONLY,
};

const FETCH = {
  title: 'Fetch',
  description: 'One session found by search, by its id: its title, its exchanges as markdown (within 24,000 characters), its console link and metadata.',
  inputSchema: z.object({ id: z.string({ error: 'id is required' }).min(1).max(1000).describe('An id from search.') }),
  outputSchema: z.object({
    id: z.string(),
    title: z.string(),
    text: z.string(),
    url: z.string(),
    metadata: z.record(z.string(), z.unknown()),
  }),
  annotations: READ_ONLY,
};

export function registerChatGptTools(server: McpServer, m: McpContext): void {
  server.registerTool('search', SEARCH, (args) =>
    runTool(m, args, async (m) => {
      // No total is shown: the engine is not asked to count every match.
      const found = await searchSessions(m.ctx, { query: args.query, filters: {}, limit: RESULTS, offset: 0, countTotal: false });
      const results = found.results.map((r) => ({
        id: idOf(r.projectId, r.sessionId),
        title: sessionTitle(r.session),
        url: sessionUrl(m, r.projectId, r.sessionId),
      }));
      const text = results.length
        ? results.map((r, i) => `${i + 1}. ${r.title} (id ${r.id}) ${r.url}`).join('\n')
        : `No sessions match "${cutChars(args.query, 200)}".`;
      return { structured: { results }, text };
    }),
  );

  server.registerTool('fetch', FETCH, (args) =>
    runTool(m, { ...args, ...(args.id.includes('/') ? partsOf(args.id) : {}) }, async (m) => {
      const { projectId, sessionId } = partsOf(args.id);
      const row = await requireReadableSession(m.ctx, projectId, sessionId);
      const page = await exchangePage(m.ctx, row, { offset: 0, limit: FETCH_EXCHANGES, content: true });
      const body = page.exchanges.map((e) => `## Exchange ${e.number}: ${e.title}\n\n${e.markdown}`).join('\n\n');
      const text = cutChars(body, BUDGET.def);
      const metadata = {
        projectId,
        sessionId,
        updatedAt: row.updatedAt.toISOString(),
        exchanges: page.total,
        truncated: text.length < body.length || page.exchanges.length < page.total,
      };
      const out = { id: args.id, title: sessionTitle(row), text, url: sessionUrl(m, projectId, sessionId), metadata };
      return { structured: out, text: `# ${out.title}\n${out.url}\n\n${text}` };
    }),
  );
}
