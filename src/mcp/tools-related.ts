/**
 * The MCP tool related_sessions: the sessions most like one the agent names (docs/search.md,
 * "Related sessions"), through the same service as REST's and GraphQL's, and so through their
 * access rule. Titles and snippets are transcript text: plain, cut, never instructions.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { PAGES } from '../domain/pages';
import { relatedSessions } from '../services/related';
import { runTool, sessionUrl, type McpContext } from './context';
import * as S from './schemas';
import { BUDGET, cutChars, plainSnippet } from './text';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
/** Characters of a title the answer carries. */
const TITLE_CHARS = 200;

const RELATED_SESSIONS = {
  title: 'Related sessions',
  description:
    'Sessions you can read that are most like the one named, most alike first (the session itself left out): the same problem, code or decision met elsewhere. Each names the exchange most like it, with a plain-text snippet (shared words marked «…») and a console link; read it with read_exchanges.',
  inputSchema: z.object({
    projectId: S.projectId,
    sessionId: S.sessionId,
    limit: S.pageSize('limit', PAGES.related, 'Sessions to return at most'),
  }),
  outputSchema: z.object({
    sessions: z.array(
      z.object({
        projectId: z.string(),
        sessionId: z.string(),
        title: z.string(),
        score: z.number().describe('How alike, in (0, 1].'),
        exchange: S.exchangeRef,
        url: S.url,
      }),
    ),
  }),
  annotations: READ_ONLY,
};

export function registerRelatedTools(server: McpServer, m: McpContext): void {
  server.registerTool('related_sessions', RELATED_SESSIONS, (args) =>
    runTool(m, args, async (m) => {
      const found = await relatedSessions(m.ctx, args.projectId, args.sessionId, args.limit);
      const sessions = found.map((r) => ({
        projectId: r.projectId,
        sessionId: r.sessionId,
        title: cutChars(r.title, TITLE_CHARS),
        score: r.score,
        exchange: { number: r.exchange.number, title: cutChars(r.exchange.title, TITLE_CHARS), snippet: plainSnippet(r.exchange.snippet) },
        url: sessionUrl(m, r.projectId, r.sessionId, r.exchange.number),
      }));
      const render = (list: typeof sessions) =>
        list
          .map(
            (r, i) =>
              `${i + 1}. ${r.title} (project ${r.projectId}; session ${r.sessionId}; score ${r.score.toFixed(3)})\n   exchange ${r.exchange.number}: ${r.exchange.title}\n   ${r.exchange.snippet}`,
          )
          .join('\n');
      let kept = sessions;
      while (kept.length > 1 && render(kept).length > BUDGET.def - 100) kept = kept.slice(0, -1);
      return {
        structured: { sessions: kept },
        text: kept.length ? cutChars(render(kept), BUDGET.def - 100) : `No other session you can read is like ${args.sessionId}.`,
      };
    }),
  );
}
