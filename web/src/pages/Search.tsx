import { Fragment, useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { gqlAbortable } from '../api/graphql';
import { graphql } from '../gql';
import type { SearchSessionsQuery } from '../gql/graphql';
import { filtersFromParams, FilterForm, readerHref, size } from './filters';
import { errorText, when } from './ui';
import { repeats, snippetSegments, type SnippetSegment } from '../snippet';

/*
 * Search as you type: the query and the filters live in the URL (`/search?q=…`
 * plus the filter parameters of filters.tsx), so a search can be shared. Typing waits DEBOUNCE_MS
 * for a pause, then asks `searchSessions`; a newer request aborts the older one and a response
 * that is no longer the latest is dropped. Snippets are HTML-escaped by the server with matches in
 * <mark>…</mark>: ../snippet.ts turns them into plain text with the matches and code marked, and
 * the page renders those as text nodes (never innerHTML); an exchange's excerpt that mostly
 * repeats the result's snippet is left out (its link stays). Arrow keys
 * move between the results (from the search box too), Enter opens the focused one. Only the first
 * page asks for `total` (counting every match is a search's largest cost in a large archive);
 * "More results" pages keep the count the first one gave.
 */

export const DEBOUNCE_MS = 150;
const PAGE = 20;

const SearchSessionsDocument = graphql(`
  query SearchSessions($query: String!, $filters: SessionFilters, $limit: Int!, $offset: Int!, $withTotal: Boolean!) {
    searchSessions(query: $query, filters: $filters, limit: $limit, offset: $offset) {
      total @include(if: $withTotal)
      results {
        id
        projectId
        name
        userTitle
        displayTitle
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
        matchingExchanges(limit: 3) {
          id
          orderNumber
          exchange
          snippet
        }
      }
    }
  }
`);

type Result = SearchSessionsQuery['searchSessions']['results'][number];

/** A snippet as React nodes: plain text (markdown syntax removed, ../snippet.ts), matches in <mark>, each run of code in one <code>. */
export function Snippet({ html }: { html: string }) {
  const runs: SnippetSegment[][] = [];
  for (const seg of snippetSegments(html)) {
    const last = runs[runs.length - 1];
    if (last && seg.code && last[0].code) last.push(seg);
    else runs.push([seg]);
  }
  const text = (run: SnippetSegment[]) => run.map((s, i) => (s.mark ? <mark key={i}>{s.text}</mark> : <Fragment key={i}>{s.text}</Fragment>));
  return <>{runs.map((run, i) => (run[0].code ? <code key={i}>{text(run)}</code> : <Fragment key={i}>{text(run)}</Fragment>))}</>;
}

export function SearchPage() {
  const [params, setParams] = useSearchParams();
  const urlQuery = params.get('q') ?? '';
  const [text, setText] = useState(urlQuery);
  const [results, setResults] = useState<Result[] | null>(null);
  const [total, setTotal] = useState(0);
  const totalRef = useRef(0);
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
    const withTotal = offset === 0;
    gqlAbortable(ctl.signal, SearchSessionsDocument, { query, filters, limit: PAGE, offset, withTotal }).then(
      (r) => {
        if (mine !== seq.current) return;
        const page = r.searchSessions.results;
        if (withTotal) totalRef.current = r.searchSessions.total ?? 0;
        setResults((old) => (offset > 0 && old ? [...old, ...page] : page));
        setTotal(totalRef.current);
        setMore(offset + page.length < totalRef.current && page.length === PAGE);
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
            const title = r.displayTitle;
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
                        {!(r.snippet && repeats(r.snippet, m.snippet)) && (
                          <>
                            : <Snippet html={m.snippet} />
                          </>
                        )}
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
