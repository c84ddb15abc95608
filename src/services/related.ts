/**
 * Related sessions: the sessions the caller may read that are most like one of theirs, itself left
 * out (docs/search.md, "Related sessions"). With an embedder (EMBEDDINGS_URL) and once the session
 * has its vector, by the engine's vector search for it; otherwise by the session's most distinctive
 * words: its title, tags and the start of its markdown weighed like TF-IDF against the documents
 * the caller can search (src/domain/distinctive-terms.ts), then one search for them (no word is
 * a gate: sessions holding more of them, and rarer ones, rank higher). It is a search like the
 * others: the same owner scopes, the same re-check of every hit against the database.
 */
import { readMarkdownRange } from '../data/content';
import { distinctiveTerms, termCandidates } from '../domain/distinctive-terms';
import { PAGES } from '../domain/pages';
import { matchRanges, snippetSource } from '../search/engine/highlight';
import { buildSnippet } from '../search/engine/snippet';
import { requireReadableSession, scopesFor } from './access';
import type { Ctx } from './context';
import { exchangePage } from './exchanges';
import { RelatedArgs } from './inputs';
import { parseInput } from '../domain/inputs';
import { searchByVector, searchSessions, type SearchResultItem } from './search';
import { metadataOf, sessionTitle } from './sessions';
import type { SessionRow } from '../domain/session-row';

/** Bytes of the start of the markdown whose words are weighed (a session's first turns say what it is about). */
const SAMPLE_BYTES = 64 * 1024;
/** The session's most frequent words, whose rarity is then asked of the engine. */
const CANDIDATES = 24;
/** The most distinctive of them, searched for. */
const TERMS = 8;

export interface RelatedSession {
  projectId: string;
  sessionId: string;
  /** The display title: the user's title, else the client's, else the name. */
  title: string;
  /** The engine's ranking score, in (0, 1]: higher is more alike. */
  score: number;
  /** The exchange that matched best: its number (from 1), title, and a snippet (HTML-escaped, shared words in <mark>). */
  exchange: { number: number; title: string; snippet: string };
  /** The row the re-check read. */
  session: SessionRow;
}

/** The sessions related to one the caller names (404 / 403 as every read of a session), at most `limit` (1-20, default 5). */
export async function relatedSessions(ctx: Ctx, projectId: string, sessionId: string, limit: unknown): Promise<RelatedSession[]> {
  const args = parseInput(RelatedArgs, { limit: limit ?? PAGES.related.def });
  const row = await requireReadableSession(ctx, projectId, sessionId);
  return relatedTo(ctx, row, args.limit);
}

/** The sessions related to `row`, which the caller was allowed to read. */
export async function relatedTo(ctx: Ctx, row: SessionRow, limit: number): Promise<RelatedSession[]> {
  // With an embedder, by the engine's vector search for the session's own vector (once it has one).
  const vector = await (ctx.deps.search.sessionVector?.(row.userId, row.projectId, row.id) ?? Promise.resolve(null)).catch(() => null);
  // The engine refusing the vector search (an index whose settings are not applied yet), or
  // failing it, leaves the lexical answer below (which answers 503 itself when the engine is down).
  const near = vector ? await searchByVector(ctx, vector, limit + 1).catch(() => null) : null;
  if (near) {
    const others = near.results.filter((r) => !(r.projectId === row.projectId && r.sessionId === row.id)).slice(0, limit);
    return Promise.all(others.map((r) => present(ctx, r, '')));
  }
  const sample = await readMarkdownRange(ctx.deps.db.reads, row.projectId, row.id, 0, Math.min(row.markdownSize, SAMPLE_BYTES));
  const heading = [sessionTitle(row), row.name, ...metadataOf(row).tags].join(' ');
  const candidates = termCandidates(heading, sample.toString('utf8'), CANDIDATES);
  if (candidates.length === 0) return [];
  const scopes = await scopesFor(ctx);
  // Without the counts (an engine that cannot give them), the most frequent words.
  const counts =
    (await ctx.deps.search
      .termCounts?.(
        scopes,
        candidates.map((c) => c.term),
      )
      .catch(() => null)) ?? null;
  const terms = distinctiveTerms(candidates, counts, TERMS);
  if (terms.length === 0) return [];
  const query = terms.join(' ');
  // The words' counts are known: the search weighs them with these rather than counting them
  // again; the session's words as written, which a related session shares, not their other
  // forms (half the engine's queries); and no total is shown.
  const knownCounts = counts
    ? { documents: counts.documents, holding: new Map(candidates.map((c, i) => [c.term, counts.counts[i] ?? 0])), recent: counts.recent }
    : undefined;
  const found = await searchSessions(ctx, {
    query,
    limit: limit + 1,
    offset: 0,
    matchingExchanges: true,
    knownCounts,
    countTotal: false,
    wordForms: false,
    lexical: true,
  });
  const others = found.results.filter((r) => !(r.projectId === row.projectId && r.sessionId === row.id)).slice(0, limit);
  return Promise.all(others.map((r) => present(ctx, r, query)));
}

/** A result with its best exchange: the matching fragment sharing the most words, else the first exchange. */
async function present(ctx: Ctx, r: SearchResultItem, query: string): Promise<RelatedSession> {
  let best: { number: number; title?: string; snippet: string; words: number } | null = null;
  for (const x of r.matchingExchanges) {
    if (typeof x.exchange !== 'number') continue;
    const ranges = matchRanges(x.content, query);
    const words = new Set(ranges.map(([a, b]) => x.content.slice(a, b).toLowerCase())).size;
    if (best === null || words > best.words) best = { number: x.exchange, title: x.title, snippet: buildSnippet(snippetSource(x.content, ranges)), words };
  }
  const number = best?.number ?? 1;
  const title = best?.title ?? (await exchangeTitle(ctx, r.session, number));
  return {
    projectId: r.projectId,
    sessionId: r.sessionId,
    title: sessionTitle(r.session),
    score: r.rank,
    exchange: { number, title, snippet: best?.snippet ?? r.snippet },
    session: r.session,
  };
}

/** An exchange's title from the session's table of contents (cached per version). */
async function exchangeTitle(ctx: Ctx, row: SessionRow, number: number): Promise<string> {
  const page = await exchangePage(ctx, row, { offset: number - 1, limit: 1, content: false });
  return page.exchanges[0]?.title || `Exchange ${number}`;
}
