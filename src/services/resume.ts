/**
 * Cross-machine resume for the upload CLI: the sessions that carry session data
 * ("resumable"), listed per project and across projects, and found by the session search (docs/search.md) with
 * terminal-friendly snippets.
 */
import { buildSnippet } from '../search/engine/snippet';
import { matchRanges, snippetSource } from '../search/engine/highlight';
import { searchSessions, MAX_SEARCH_LIMIT, type SearchResultItem } from './search';
import type { Ctx } from './context';
import { projectsWithStats } from './projects';
import type { ProjectDto } from './presenters/project';
import { readableScopes, requireReadableProject } from './access';
import { resumableSessions, resumableSessionsByKeys } from '../data/sessions';
import { presentSession, type SessionDto } from './presenters/session';
import { ResumableParam, ResumeSearchInput } from './inputs';
import { parseInput } from '../domain/inputs';

/** At most this many results from POST /search/resume. */
const RESUME_SEARCH_MAX = 500;
/** Engine hits looked at per resume search (pages of MAX_SEARCH_LIMIT), resumable or not. */
const RESUME_SEARCH_SCAN = 2000;

/** `?resumable=` : absent or "false" → every session, "true" → resumable ones only. */
export function resumableParam(raw: unknown): boolean {
  return parseInput(ResumableParam, raw);
}

/** GET /projects/{id}/sessions?resumable=true: all of the project's resumable sessions, newest first. */
export async function resumableSessionsOfProject(ctx: Ctx, projectId: string) {
  await requireReadableProject(ctx, projectId);
  const rows = await resumableSessions(ctx.deps.db.reads, await readableScopes(ctx), projectId);
  const sessions = rows.map((r) => presentSession(r));
  return { sessions, total: sessions.length, projectId, nextCursor: null };
}

/** GET /projects?resumable=true: projects with a resumable session, each with their summaries. */
export async function resumableProjects(ctx: Ctx): Promise<{ projects: Array<ProjectDto & { sessions: SessionDto[] }>; total: number }> {
  const rows = await resumableSessions(ctx.deps.db.reads, await readableScopes(ctx));
  const byProject = new Map<string, SessionDto[]>();
  for (const r of rows) {
    const list = byProject.get(r.projectId) ?? [];
    list.push(presentSession(r));
    byProject.set(r.projectId, list);
  }
  const projects = (await projectsWithStats(ctx, [...byProject.keys()]))
    .filter((p) => byProject.has(p.id))
    .map((p) => ({ ...p, sessions: byProject.get(p.id)! }));
  return { projects, total: projects.length };
}

/**
 * A snippet for a terminal: the matched words between U+0002 and U+0003, no HTML (entities
 * decoded), and no control character of the text itself that could pass for a marker.
 */
function terminalSnippet(html: string): string {
  return html
    .replace(/[\u0002\u0003]/g, '')
    .replace(/<mark>/g, '\u0002')
    .replace(/<\/mark>/g, '\u0003')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

/** From the first matching exchange when the engine reported one, else the session's snippet. */
function snippetOf(hit: SearchResultItem, query: string): string {
  const first = hit.matchingExchanges[0];
  if (!first) return terminalSnippet(hit.snippet);
  return terminalSnippet(buildSnippet(snippetSource(first.content, matchRanges(first.content, query))));
}

type ResumeSearchResult = SessionDto & { projectName: string; snippet: string };

/** POST /search/resume {query, projectId?}: resumable sessions matching every word, newest first. */
export async function searchResumable(ctx: Ctx, body: unknown): Promise<{ results: ResumeSearchResult[] }> {
  const { query, projectId } = parseInput(ResumeSearchInput, body);
  // Owner-scoped like every search; a project that is not the caller's simply matches nothing.
  const filters = projectId ? { projectIds: [projectId] } : undefined;
  const hits = new Map<string, SearchResultItem>();
  for (let offset = 0; offset < RESUME_SEARCH_SCAN; offset += MAX_SEARCH_LIMIT) {
    const page = await searchSessions(ctx, { query, filters, limit: MAX_SEARCH_LIMIT, offset, matchingExchanges: true, allWords: true });
    for (const r of page.results) if (!hits.has(`${r.projectId}/${r.sessionId}`)) hits.set(`${r.projectId}/${r.sessionId}`, r);
    if (offset + MAX_SEARCH_LIMIT >= page.total) break;
  }
  if (hits.size === 0) return { results: [] };
  const keys = [...hits.values()];
  const rows = await resumableSessionsByKeys(ctx.deps.db.reads, await readableScopes(ctx), keys, RESUME_SEARCH_MAX);
  const results = rows.map(({ projectName, ...row }) => ({
    ...presentSession(row),
    projectName,
    snippet: snippetOf(hits.get(`${row.projectId}/${row.id}`)!, query.trim()),
  }));
  return { results };
}
