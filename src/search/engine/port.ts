import type { TermCounts } from '../../domain/distinctive-terms';
import type { SessionFilters } from '../../domain/filters';

/** One session that matched, as the engine reports it (not yet re-checked against the database). */
export interface SearchHit {
  projectId: string;
  sessionId: string;
  /** In (0, 1]; higher is more relevant. */
  rank: number;
  /** <= 240 chars of markdown, HTML-escaped, matched terms in <mark>…</mark>. */
  snippet: string;
  /**
   * `start`: byte offset of the fragment in the markdown; `exchange`: the reader's exchange (from 1)
   * of its first match. Null when the fragment was indexed before these were recorded. `title`:
   * that exchange's title in the reader's table of contents, when the search had the whole
   * markdown at hand (sessions indexed whole); else absent (read it from the table of contents).
   */
  matchingExchanges: Array<{ id: string; content: string; orderNumber: number; start?: number | null; exchange?: number | null; title?: string }>;
  /** sessions.contentDigest of the indexed version: the service drops the hit when it differs (stale). */
  contentDigest?: string;
}

export interface SearchOptions {
  /** Fill SearchHit.matchingExchanges (one more engine query). Default true. */
  matchingExchanges?: boolean;
  /** Every word of the query required, stop words included (the upload CLI's resume search). Default false: no word is a gate. */
  allWords?: boolean;
  /**
   * How many documents of the scopes there are, and how many hold each word as written, already
   * counted by the caller (related sessions count them to choose their words): when they name
   * every word of a query without phrases, the search does not count them again.
   */
  knownCounts?: KnownCounts;
  /** False: the page only, `total` not counted (no facet count, no listing of large sessions). Default true. */
  countTotal?: boolean;
  /** False: the words as written only, no forms queries (half the queries of a federated search). Default true. */
  wordForms?: boolean;
  /** True: never hybrid, even with an embedder set (related sessions' words, which are no question). Default false. */
  lexical?: boolean;
}

/** Document counts known before a search: all documents of its scopes, and those holding each word. */
export interface KnownCounts {
  documents: number;
  holding: ReadonlyMap<string, number>;
  /**
   * Of `documents`, those in the recent index. 0: the recent index held none of the scopes'
   * documents a moment ago, and the search does not ask again (an upload in between is found by
   * the next search, as one written just after it).
   */
  recent?: number;
}

/** One page of a search, as the service asks the engine for it. */
export interface SearchRequest extends SearchOptions {
  /** The owner scopes to search (the caller's id and their teams'), never empty. */
  scopes: readonly string[];
  query: string;
  filters: SessionFilters;
  limit: number;
  offset: number;
  /**
   * Called with the page's sessions as soon as the engine has ranked them and before they are
   * marked (snippets, matching exchanges): the service starts its database re-check there, so
   * that the marking runs while the re-check is in flight. Called again when a standby answers
   * after its primary failed; not called when several engines' pages are merged. The caller
   * compares the returned page's sessions with the last call's and re-checks the page itself
   * when they differ or it was not called.
   */
  onRanked?: (hits: ReadonlyArray<{ projectId: string; sessionId: string }>) => void;
  /**
   * Hybrid search (docs/search.md, "Semantic search"): the query's vector and the semantic
   * results' weight, once the embeddings endpoint has answered (null: it failed or was slow; the
   * search is lexical), so that the engine's word counts are asked meanwhile. Set by the search
   * itself when an embedder is configured and the query is not lexical-only; a search the engine
   * refuses as hybrid is answered lexically (onRefused). Never rejects.
   */
  semantic?: Promise<SemanticSearch | null>;
  /** Search by this vector alone (related sessions: a session's own vector); `query` is then unused. */
  vector?: number[];
}

/** A hybrid search's query vector, the semantic results' weight (0 to 1), and what to call when the engine refuses it. */
interface SemanticSearch {
  vector: number[];
  ratio: number;
  onRefused?: (err: unknown) => void;
}

export interface SearchPage {
  total: number;
  hits: SearchHit[];
}

/**
 * The search port: one adapter (Meilisearch). Services call it; it never sees HTTP.
 * `search` always scopes to `scopes` itself; throws AppError('SERVICE_UNAVAILABLE') when the
 * engine is down.
 */
export interface SearchPort {
  start(): Promise<void>;
  stop(): Promise<void>;
  search(request: SearchRequest): Promise<SearchPage>;
  /** True when every engine can answer searches (its primary, or its standby, answered its last check). */
  isHealthy(): boolean;
  /** Each engine's health, for /metrics. */
  engineStatus?(): EngineStatus[];
  /** Documents the recent indexes hold, for /metrics: what compaction has still to move into the main ones. */
  recentDocuments?(): Promise<number>;
  /** How many documents of `scopes` hold each term, and how many there are (related sessions weigh their words with it). */
  termCounts?(scopes: readonly string[], terms: readonly string[]): Promise<TermCounts>;
  /**
   * The vector of a session's document, read from the engine of its owning scope (recent index
   * first, its copy being the current one); null when semantic search is off or the session has
   * none yet. Related sessions search for it (SearchRequest.vector).
   */
  sessionVector?(owner: string, projectId: string, sessionId: string): Promise<number[] | null>;
}

export interface EngineStatus {
  /** Position in MEILI_URLS (0 for a single engine). */
  engine: number;
  primaryUp: boolean;
  /** Null: no standby. */
  standbyUp: boolean | null;
  /** in-sync, behind (catching up from its cursor), rebuilding (from the database); null: no standby. */
  standbyState: 'in-sync' | 'behind' | 'rebuilding' | null;
  /** Seconds between the newest outbox row and the oldest one the standby has not applied (0 in sync); null: no standby. */
  standbyLagSeconds: number | null;
}
