/**
 * The MCP tools that search: search_sessions (the ranked, typo-tolerant search REST's and
 * GraphQL's searchSessions run, snippets as plain text with «…» marks) and gather_context (the
 * best-matching exchanges of the best sessions, cut to the budget, each citable).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { PAGES } from '../domain/pages';
import { buildSnippet } from '../search/engine/snippet';
import { matchRanges, snippetSource } from '../search/engine/highlight';
import { exchangePage } from '../services/exchanges';
import { projectsWithStats } from '../services/projects';
import { searchSessions, type SearchResultItem } from '../services/search';
import { STOP_WORDS } from '../search/engine/query-plan';
import { sessionTitle } from '../services/sessions';
import { runTool, seal, sessionUrl, unseal, type McpContext } from './context';
import * as S from './schemas';
import { BUDGET, cutChars, excerptAround, plainSnippet } from './text';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
/** Exchanges named per search result, and excerpts gather_context takes from one session. */
const EXCHANGES_PER_RESULT = 3;
const EXCERPTS_PER_SESSION = 2;
/** A session this small has its exchanges scored here when the engine named none. */
const SCORE_WHOLE_BYTES = 1024 * 1024;

const query = z.string({ error: 'query is required' }).trim().min(1, { error: 'query is required' }).max(512, { error: 'query: at most 512 characters' });

/** Plain-text snippet of `content` for `q`: the search service's excerpt, «» around matches. */
const snippetOf = (content: string, q: string) => plainSnippet(buildSnippet(snippetSource(content, matchRanges(content, q))));

/** Names of the results' projects (through the services' access rule). */
async function projectNames(m: McpContext, results: SearchResultItem[]): Promise<Map<string, string>> {
  const ids = [...new Set(results.map((r) => r.projectId))];
  return new Map((await projectsWithStats(m.ctx, ids)).map((p) => [p.id, p.name]));
}

const SEARCH_SESSIONS = {
  title: 'Search sessions',
  description:
    'Ranked full-text search over the sessions you can read: case-insensitive words, typo-tolerant, prefix match on the last word, "quoted phrases". Each result has a plain-text snippet with matches marked «…», up to 3 matching exchanges (read them with read_exchanges) and a console link.',
  inputSchema: z.object({
    query: query.describe('What to look for (at most 512 characters, 32 words).'),
    projectIds: S.words('projectIds', 'Only these projects.'),
    models: S.words('models', 'Only sessions that used any of these models.'),
    tags: S.words('tags', 'Only sessions with any of these tags.'),
    branches: S.words('branches', 'Only sessions on any of these git branches.'),
    agents: S.words('agents', 'Only sessions recorded by any of these agents.'),
    from: S.from,
    to: S.to,
    limit: S.pageSize('limit', PAGES.mcpSearch, 'Results per page'),
    cursor: S.cursor,
  }),
  outputSchema: z.object({
    results: z.array(
      z.object({
        projectId: z.string(),
        sessionId: z.string(),
        title: z.string(),
        projectName: z.string(),
        updatedAt: z.string(),
        snippet: z.string(),
        exchanges: z.array(S.exchangeRef),
        url: S.url,
      }),
    ),
    total: z.number().int().describe('Sessions matching in all.'),
    nextCursor: S.nextCursor,
  }),
  annotations: READ_ONLY,
};

const GATHER_CONTEXT = {
  title: 'Gather context',
  description:
    'For a question ("how did we fix the flaky upload test?"), the best-matching exchanges of the best-matching sessions, as excerpts within the character budget, each with its project, session, exchange number and console link to cite.',
  inputSchema: z.object({
    question: query.describe('The question or keywords (at most 512 characters).'),
    projectIds: S.words('projectIds', 'Only these projects.'),
    maxSessions: S.pageSize('maxSessions', PAGES.mcpSessions, 'Sessions to take excerpts from'),
    maxChars: S.maxChars,
  }),
  outputSchema: z.object({
    excerpts: z.array(
      z.object({
        projectId: z.string(),
        sessionId: z.string(),
        exchange: z.number().int(),
        title: z.string(),
        exchangeTitle: z.string(),
        text: z.string(),
        url: S.url,
      }),
    ),
  }),
  annotations: READ_ONLY,
};

export function registerSearchTools(server: McpServer, m: McpContext): void {
  server.registerTool('search_sessions', SEARCH_SESSIONS, (args) =>
    runTool(m, args, async (m) => {
      const { cursor, limit = PAGES.mcpSearch.def, ...filters } = args;
      const offset = cursor ? Number(unseal(m, 'search_sessions', filters, cursor)) : 0;
      const found = await searchSessions(m.ctx, {
        query: args.query,
        filters: {
          projectIds: args.projectIds,
          llmModels: args.models,
          tags: args.tags,
          gitBranches: args.branches,
          agentNames: args.agents,
          dateRange: S.dateRange(args.from, args.to),
        },
        limit,
        offset,
        matchingExchanges: true,
      });
      const names = await projectNames(m, found.results);
      const results = found.results.map((r) => {
        const seen = new Set<number>();
        const exchanges = r.matchingExchanges
          .filter((x) => typeof x.exchange === 'number' && !seen.has(x.exchange) && seen.add(x.exchange))
          .slice(0, EXCHANGES_PER_RESULT)
          .map((x) => ({ number: x.exchange!, title: x.title === undefined ? UNTITLED : cutChars(x.title, 200), snippet: snippetOf(x.content, args.query) }));
        return {
          projectId: r.projectId,
          sessionId: r.sessionId,
          title: sessionTitle(r.session),
          projectName: names.get(r.projectId) ?? r.projectId,
          updatedAt: r.session.updatedAt.toISOString(),
          snippet: plainSnippet(r.snippet),
          exchanges,
          url: sessionUrl(m, r.projectId, r.sessionId),
        };
      });
      await titleExchanges(m, found.results, results);
      const render = (list: typeof results) =>
        list
          .map(
            (r, i) =>
              `${offset + i + 1}. ${r.title} (project ${r.projectName}, id ${r.projectId}; session ${r.sessionId}; updated ${r.updatedAt})\n   ${r.snippet}${r.exchanges.map((x) => `\n   - exchange ${x.number}: ${x.snippet}`).join('')}`,
          )
          .join('\n');
      let kept = results;
      while (kept.length > 1 && render(kept).length > BUDGET.def - 100) kept = kept.slice(0, -1);
      const end = offset + kept.length;
      const nextCursor = end < found.total && (kept.length < results.length || results.length === limit) ? seal(m, 'search_sessions', filters, end) : null;
      const text = kept.length ? cutChars(render(kept), BUDGET.def - 100) : `No sessions match "${cutChars(args.query, 200)}".`;
      return {
        structured: { results: kept, total: found.total, nextCursor },
        text: `${text}\n(${found.total} sessions match${nextCursor ? '; more: pass nextCursor' : ''})`,
      };
    }),
  );

  server.registerTool('gather_context', GATHER_CONTEXT, (args) =>
    runTool(m, args, async (m) => {
      const budget = args.maxChars ?? BUDGET.def;
      const found = await searchQuestion(m, args.question, args.projectIds, args.maxSessions ?? PAGES.mcpSessions.def);
      const picks: Array<{ r: SearchResultItem; numbers: number[] }> = [];
      for (const r of found.results) picks.push({ r, numbers: await exchangesToQuote(m, r, found.query) });
      const count = picks.reduce((n, p) => n + p.numbers.length, 0);
      const HEAD = 240;
      const each = Math.max(200, Math.floor(budget / Math.max(1, count)) - HEAD);
      const excerpts: Array<{ projectId: string; sessionId: string; exchange: number; title: string; exchangeTitle: string; text: string; url: string }> = [];
      let left = budget;
      for (const { r, numbers } of picks) {
        for (const n of numbers) {
          if (left < HEAD + 200) break;
          const page = await exchangePage(m.ctx, r.session, { offset: n - 1, limit: 1, content: true });
          const e = page.exchanges[0];
          if (!e) continue;
          const md = e.markdown!;
          const first = matchRanges(md, found.query)[0];
          const { text, cut } = excerptAround(md, first ? first[0] : 0, Math.min(each, left - HEAD));
          const title = cutChars(sessionTitle(r.session), 200);
          const exchangeTitle = cutChars(e.title, 200);
          excerpts.push({
            projectId: r.projectId,
            sessionId: r.sessionId,
            exchange: e.number,
            title,
            exchangeTitle,
            text: cut ? `…${text}…` : text,
            url: sessionUrl(m, r.projectId, r.sessionId, e.number),
          });
          left -= text.length + HEAD;
        }
      }
      const rendered = excerpts
        .map((x) => `### ${x.title} — exchange ${x.exchange}: ${x.exchangeTitle}\n(project ${x.projectId}, session ${x.sessionId}; ${x.url})\n\n${x.text}`)
        .join('\n\n');
      return {
        structured: { excerpts },
        text: excerpts.length ? cutChars(rendered, budget) : `Nothing in the archive matches "${cutChars(args.question, 200)}".`,
      };
    }),
  );
}

/**
 * The search of a question: one search, ranked by how many of its words (and which) a session
 * holds, no word required (docs/search.md). Its words without stop words, at most the 32 a query
 * may have; the search leaves out stop words the same way, and marks the same words.
 */
async function searchQuestion(m: McpContext, question: string, projectIds: string[] | undefined, limit: number) {
  const phrases = question.match(/"[^"]+"/g) ?? [];
  const loose = question
    .replace(/"[^"]+"/g, ' ')
    .split(/[^\p{L}\p{N}_./-]+/u)
    .filter((w) => w && !STOP_WORDS.has(w.toLowerCase()));
  const query = [...phrases, ...[...new Set(loose)].slice(0, 32)].join(' ') || question;
  // gather_context quotes the sessions found and says nothing of how many match: no total counted.
  const found = await searchSessions(m.ctx, { query, filters: { projectIds }, limit, offset: 0, matchingExchanges: true, countTotal: false });
  return { ...found, query };
}

/**
 * The exchanges of a result to quote, the best answer first: of a small session, those matching
 * the most distinct words (scored here, one read of at most 1 MiB); of a large one, those the
 * search named (its best fragment first); else the first.
 */
async function exchangesToQuote(m: McpContext, r: SearchResultItem, q: string): Promise<number[]> {
  if (r.session.markdownSize > SCORE_WHOLE_BYTES) {
    const named = [...new Set(r.matchingExchanges.map((x) => x.exchange).filter((n): n is number => typeof n === 'number'))];
    return named.length ? named.slice(0, EXCERPTS_PER_SESSION) : [1];
  }
  const page = await exchangePage(m.ctx, r.session, { offset: 0, limit: 1000, content: true });
  const scored = page.exchanges
    .map((e) => ({ n: e.number, score: new Set(matchRanges(e.markdown!, q).map(([a, b]) => e.markdown!.slice(a, b).toLowerCase())).size }))
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.n - b.n);
  // The exchange that answers best first.
  return scored.length ? scored.slice(0, EXCERPTS_PER_SESSION).map((s) => s.n) : [1];
}

/** The title of a matching exchange the search did not know (its session is indexed in fragments). */
const UNTITLED = '';

/**
 * The exchanges named in results without a title (those of sessions indexed in fragments) get
 * theirs from the table of contents (cached per version): one read per such session, at once.
 */
async function titleExchanges(
  m: McpContext,
  found: SearchResultItem[],
  results: Array<{ exchanges: Array<{ number: number; title: string }> }>,
): Promise<void> {
  await Promise.all(
    found.map(async (hit, i) => {
      const wanted = results[i].exchanges.filter((x) => x.title === UNTITLED);
      if (!wanted.length) return;
      const lo = Math.min(...wanted.map((x) => x.number));
      const hi = Math.max(...wanted.map((x) => x.number));
      const page = await exchangePage(m.ctx, hit.session, { offset: lo - 1, limit: hi - lo + 1, content: false });
      const titles = new Map(page.exchanges.map((e) => [e.number, e.title]));
      for (const x of wanted) x.title = cutChars(titles.get(x.number) || `Exchange ${x.number}`, 200);
    }),
  );
}
