import { useEffect, useMemo, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import { Link, useSearchParams } from 'react-router';
import { gqlAbortable } from '../api/graphql';
import { graphql } from '../gql';
import type { SearchSessionsQuery } from '../gql/graphql';
import { displayTitle, filtersFromParams, FilterForm, readerHref, size } from './filters';
import { errorText, when } from './ui';

/*
 * Search as you type: the query and the filters live in the URL (`/search?q=…`
 * plus the filter parameters of filters.tsx), so a search can be shared. Typing waits DEBOUNCE_MS
 * for a pause, then asks `searchSessions`; a newer request aborts the older one and a response
 * that is no longer the latest is dropped. Snippets are HTML-escaped by the server with matches in
 * <mark>…</mark>: we split on those two tags and render text nodes (never innerHTML). Arrow keys
 * move between the results (from the search box too), Enter opens the focused one.
 */

export const DEBOUNCE_MS = 150;
const PAGE = 20;

const SearchSessionsDocument = graphql(`
  query SearchSessions($query: String!, $filters: SessionFilters, $limit: Int!, $offset: Int!) {
    searchSessions(query: $query, filters: $filters, limit: $limit, offset: $offset) {
      total
      results {
        id
        projectId
        name
        userTitle
        snippet
        updatedAt
        markdownSize
        metadata {
          title
          llmModels
          tags
        }
        project {
          id
          name
        }
        uploadedBy {
          id
          name
        }
        matchingExchanges {
          id
          orderNumber
          exchange
          content
        }
      }
    }
  }
`);

type Result = SearchSessionsQuery['searchSessions']['results'][number];

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** HTML-escaped text → the text it stands for (entities only; the input holds no other markup). */
export function unescapeHtml(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[e.toLowerCase()] ?? whole;
  });
}

/** A snippet as React nodes: text, with each <mark>…</mark> span as a <mark> element. */
export function Snippet({ html }: { html: string }) {
  const parts: ReactNode[] = [];
  let marked = false;
  html.split(/(<mark>|<\/mark>)/).forEach((piece, i) => {
    if (piece === '<mark>') marked = true;
    else if (piece === '</mark>') marked = false;
    else if (piece) parts.push(marked ? <mark key={i}>{unescapeHtml(piece)}</mark> : unescapeHtml(piece));
  });
  return <>{parts}</>;
}

/** Up to ~160 characters of a matching exchange around the first query word, words marked. */
function Excerpt({ text, query }: { text: string; query: string }) {
  const words = (query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1);
  const lower = text.toLowerCase();
  let at = -1;
  for (const w of words) {
    const i = lower.indexOf(w);
    if (i !== -1 && (at === -1 || i < at)) at = i;
  }
  const start = Math.max(0, at - 60);
  const slice = text.slice(start, start + 160).replace(/\s+/g, ' ');
  const pieces: ReactNode[] = [];
  if (words.length) {
    const re = new RegExp(`(${words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'giu');
    slice.split(re).forEach((p, i) => pieces.push(i % 2 === 1 ? <mark key={i}>{p}</mark> : p));
  } else pieces.push(slice);
  return (
    <>
      {start > 0 ? '…' : ''}
      {pieces}
      {start + 160 < text.length ? '…' : ''}
    </>
  );
}

export function SearchPage() {
  const [params, setParams] = useSearchParams();
  const urlQuery = params.get('q') ?? '';
  const [text, setText] = useState(urlQuery);
  const [results, setResults] = useState<Result[] | null>(null);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [more, setMore] = useState(false);
  const listRef = useRef<HTMLOListElement>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const seq = useRef(0);
  const abort = useRef<AbortController | null>(null);

  // The URL follows the box after a pause (replace: typing does not fill the history).
  useEffect(() => {
    if (text === urlQuery) return;
    const t = setTimeout(() => {
      const next = new URLSearchParams(params);
      if (text.trim()) next.set('q', text);
      else next.delete('q');
      setParams(next, { replace: true });
    }, DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [text, urlQuery, params, setParams]);

  // Back/forward or a shared link: the box follows the URL.
  useEffect(() => {
    setText((t) => (t === urlQuery ? t : urlQuery));
    // Only when the URL changes, not on each keystroke.
  }, [urlQuery]);

  const key = params.toString();
  const filters = useMemo(() => filtersFromParams(new URLSearchParams(key)), [key]);

  const run = (offset: number) => {
    const query = urlQuery.trim();
    abort.current?.abort();
    const mine = ++seq.current;
    if (!query) {
      setResults(null);
      setTotal(0);
      setBusy(false);
      setError(null);
      return;
    }
    const ctl = new AbortController();
    abort.current = ctl;
    setBusy(true);
    gqlAbortable(ctl.signal, SearchSessionsDocument, { query, filters, limit: PAGE, offset }).then(
      (r) => {
        if (mine !== seq.current) return;
        const page = r.searchSessions.results;
        setResults((old) => (offset > 0 && old ? [...old, ...page] : page));
        setTotal(r.searchSessions.total);
        setMore(offset + page.length < r.searchSessions.total && page.length > 0);
        setError(null);
        setBusy(false);
      },
      (err: unknown) => {
        if (mine !== seq.current || ctl.signal.aborted) return;
        setError(errorText(err));
        setBusy(false);
      },
    );
  };

  useEffect(() => {
    run(0);
    return () => abort.current?.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [urlQuery, filters]);

  /** Arrow keys between the search box and the result links; Home/End to the ends. */
  const links = () => Array.from(listRef.current?.querySelectorAll<HTMLAnchorElement>('a[data-result]') ?? []);
  const move = (e: KeyboardEvent) => {
    if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(e.key)) return;
    const all = links();
    if (all.length === 0) return;
    const inBox = e.target === inputRef.current;
    if (inBox && (e.key === 'Home' || e.key === 'End')) return;
    e.preventDefault();
    const i = all.indexOf(document.activeElement as HTMLAnchorElement);
    let next: number;
    if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = all.length - 1;
    else if (e.key === 'ArrowDown') next = inBox || i === -1 ? 0 : Math.min(i + 1, all.length - 1);
    else if (i <= 0) {
      inputRef.current?.focus();
      return;
    } else next = i - 1;
    all[next].focus();
  };

  const status = !urlQuery.trim()
    ? 'Type to search your sessions.'
    : busy && results === null
      ? 'Searching…'
      : results
        ? `${total === 1 ? '1 session matches' : `${total} sessions match`}.`
        : '';

  return (
    <div onKeyDown={move}>
      <h1>Search</h1>
      <form role="search" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor="search-box">Search sessions</label>
          <input
            id="search-box"
            ref={inputRef}
            type="search"
            autoComplete="off"
            spellCheck={false}
            value={text}
            onChange={(e) => setText(e.target.value)}
            aria-describedby="search-help"
            aria-controls={results && results.length > 0 ? 'search-results' : undefined}
          />
          <small id="search-help" className="hint">
            Words match with typos and as prefixes; "quoted phrases" match exactly. Arrow keys move through the results.
          </small>
        </div>
      </form>
      <FilterForm params={params} onChange={(next) => setParams(next, { replace: true })} />
      <p role="status" className="status" aria-busy={busy}>
        {status}
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {results && results.length > 0 && (
        <ol id="search-results" ref={listRef} className="results" aria-label="Search results">
          {results.map((r) => {
            const title = displayTitle(r);
            return (
              <li key={`${r.projectId}/${r.id}`} className="card result">
                <h2>
                  <Link to={readerHref(r.projectId, r.id)} data-result="">
                    {title}
                  </Link>
                </h2>
                <p className="muted">
                  {r.project.name} · {when(r.updatedAt)} · {size(r.markdownSize)}
                  {r.uploadedBy && <> · Uploaded by {r.uploadedBy.name}</>}
                  {r.metadata.llmModels.length > 0 && <> · {r.metadata.llmModels.join(', ')}</>}
                </p>
                {r.snippet && (
                  <p className="snippet">
                    <Snippet html={r.snippet} />
                  </p>
                )}
                {r.matchingExchanges.length > 0 && (
                  <ul className="exchanges" aria-label={`Matching exchanges in ${title}`}>
                    {r.matchingExchanges.slice(0, 3).map((m) => (
                      <li key={m.id}>
                        {m.exchange ? (
                          <Link to={readerHref(r.projectId, r.id, m.exchange)} data-result="">
                            Exchange {m.exchange}
                          </Link>
                        ) : (
                          <span className="muted">Part {m.orderNumber}</span>
                        )}
                        : <Excerpt text={m.content} query={urlQuery} />
                      </li>
                    ))}
                  </ul>
                )}
              </li>
            );
          })}
        </ol>
      )}
      {more && (
        <button type="button" onClick={() => run(results?.length ?? 0)}>
          More results
        </button>
      )}
    </div>
  );
}
