import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import type { SessionExchangesPageQuery, SessionTocQuery } from '../gql/graphql';
import { renderMarkdown } from '../markdown';
import { errorText } from './ui';

/*
 * The reader's transcript: a table of contents of the exchanges, and the exchanges
 * read a page at a time (Session.exchanges, at most 1 MiB per page) around the one being read,
 * extended as the reader scrolls, trimmed far from it; each exchange is rendered through the
 * sanitiser (../markdown.ts) only when it comes near the viewport. `#exchange-<n>` in the address
 * opens it at exchange n.
 */

/** What the table of contents and the transcript both show of an exchange. */
graphql(`
  fragment ExchangeHead on SessionExchange {
    number
    title
    size
    continuation
  }
`);

export const TocDocument = graphql(`
  query SessionToc($projectId: ID!, $id: ID!, $offset: Int!) {
    session(id: $id, projectId: $projectId) {
      etag
      exchanges(offset: $offset, limit: 200) {
        total
        nextOffset
        exchanges {
          ...ExchangeHead
        }
      }
    }
  }
`);

const PageDocument = graphql(`
  query SessionExchangesPage($projectId: ID!, $id: ID!, $offset: Int!, $limit: Int!) {
    session(id: $id, projectId: $projectId) {
      etag
      exchanges(offset: $offset, limit: $limit) {
        total
        nextOffset
        exchanges {
          ...ExchangeHead
          markdown
        }
      }
    }
  }
`);

type TocEntry = NonNullable<SessionTocQuery['session']>['exchanges']['exchanges'][number];
type Exchange = NonNullable<SessionExchangesPageQuery['session']>['exchanges']['exchanges'][number];

/** Exchanges fetched per page (a page is also bounded to 1 MiB by the service). */
const PAGE = 10;
/** The first page is smaller, so the exchange asked for shows sooner; more follow as the reader scrolls. */
const FIRST_PAGE = 3;
/** Exchanges kept in the page at once; beyond, the farthest ones are dropped again. */
const WINDOW = 60;

const exchangeOfHash = (hash: string): number | null => {
  const m = /^#exchange-(\d{1,9})$/.exec(hash);
  return m ? Math.max(1, Number(m[1])) : null;
};

/** Calls `onVisible` while `ref`'s element is within `margin` of the viewport. */
function useNearViewport<T extends Element>(onVisible: () => void, margin: string, enabled = true) {
  const ref = useRef<T>(null);
  const cb = useRef(onVisible);
  // Updated after each commit (not during render), before any effect or observer can call it.
  useLayoutEffect(() => {
    cb.current = onVisible;
  });
  useEffect(() => {
    const el = ref.current;
    if (!el || !enabled) return;
    const io = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && cb.current(), { rootMargin: margin });
    io.observe(el);
    return () => io.disconnect();
  }, [margin, enabled]);
  return ref;
}

export interface Vars {
  projectId: string;
  id: string;
}

export function Transcript({ vars, markdownSize, etag }: { vars: Vars; markdownSize: number; etag: string }) {
  const { projectId, id } = vars;
  const location = useLocation();
  const navigate = useNavigate();
  const asked = exchangeOfHash(location.hash);
  const target = asked ?? 1;

  // Table of contents: 200 entries per request, more on demand.
  const [toc, setToc] = useState<TocEntry[]>([]);
  const [tocNext, setTocNext] = useState<number | null>(null);
  const [total, setTotal] = useState<number | null>(null);
  // The transcript's first page may bring `total` before the table of contents arrives.
  const [tocLoaded, setTocLoaded] = useState(false);
  const [changed, setChanged] = useState(false);
  // Versions this page knows of: the one it opened and those its own edits (rename, tags) made.
  const known = useRef(new Set<string>([etag]));
  useEffect(() => {
    known.current.add(etag);
  }, [etag]);
  const [error, setError] = useState<string | null>(null);

  // The loaded window of the transcript: exchanges [start, start + items.length).
  const [items, setItems] = useState<Exchange[]>([]);
  const [start, setStart] = useState(0);
  const [next, setNext] = useState<number | null>(null);
  const [loading, setLoading] = useState(false);
  const scrollTo = useRef<number | null>(null);
  const busy = useRef(false);

  const seeVersion = useCallback((seen: string) => {
    if (!known.current.has(seen)) setChanged(true);
  }, []);

  const loadToc = useCallback(
    (offset: number) =>
      gql(TocDocument, { projectId, id, offset }).then(
        (r) => {
          if (!r.session) throw new Error('Session not found');
          seeVersion(r.session.etag);
          const p = r.session.exchanges;
          setTotal(p.total);
          setToc((old) => (offset === 0 ? p.exchanges : [...old, ...p.exchanges]));
          setTocNext(p.nextOffset ?? null);
          setTocLoaded(true);
        },
        (err: unknown) => setError(errorText(err)),
      ),
    [projectId, id, seeVersion],
  );

  useEffect(() => {
    void loadToc(0);
  }, [loadToc]);

  const fetchPage = useCallback(
    async (offset: number, limit: number) => {
      const r = await gql(PageDocument, { projectId, id, offset, limit });
      if (!r.session) throw new Error('Session not found');
      seeVersion(r.session.etag);
      setTotal(r.session.exchanges.total);
      return r.session.exchanges;
    },
    [projectId, id, seeVersion],
  );

  /** One load of exchanges at a time: shown as loading, a failure shown as the error. */
  const runLoad = useCallback(async (load: () => Promise<void>) => {
    busy.current = true;
    setLoading(true);
    try {
      await load();
    } catch (err) {
      setError(errorText(err));
    } finally {
      busy.current = false;
      setLoading(false);
    }
  }, []);

  /** Starts the window at exchange `n` (1-based); `focus`: scroll to it and focus its heading. */
  const openAt = useCallback(
    (n: number, focus: boolean) => {
      setError(null);
      return runLoad(async () => {
        const p = await fetchPage(n - 1, FIRST_PAGE);
        if (p.exchanges.length === 0 && n > 1) {
          // Past the end (an old link): show the last exchange instead.
          const last = Math.max(1, p.total);
          const q = await fetchPage(last - 1, FIRST_PAGE);
          setItems(q.exchanges);
          setStart(last - 1);
          setNext(q.nextOffset ?? null);
          if (focus) scrollTo.current = last;
        } else {
          setItems(p.exchanges);
          setStart(n - 1);
          setNext(p.nextOffset ?? null);
          if (focus) scrollTo.current = n;
        }
      });
    },
    [fetchPage, runLoad],
  );

  // Open at the exchange the address names; later hash changes jump (within the window: scroll).
  // The window as last committed, for effects and callbacks that must not re-run when it changes;
  // layout effects run before every passive effect, so the effects below see this render's values.
  const itemsRef = useRef(items);
  const startRef = useRef(start);
  useLayoutEffect(() => {
    itemsRef.current = items;
    startRef.current = start;
  });
  useEffect(() => {
    const have = itemsRef.current.length > 0 && target > startRef.current && target <= startRef.current + itemsRef.current.length;
    if (have) {
      scrollTo.current = target;
      setItems((x) => [...x]);
    } else {
      // Scrolled to and focused only when the address names an exchange.
      void openAt(target, asked !== null);
    }
  }, [target, asked, openAt]);

  useEffect(() => {
    const n = scrollTo.current;
    if (n === null) return;
    const el = document.getElementById(`exchange-${n}`);
    if (!el) return;
    scrollTo.current = null;
    el.scrollIntoView({ block: 'start' });
    el.querySelector<HTMLElement>('h2')?.focus({ preventScroll: true });
  }, [items]);

  const loadMore = useCallback(async () => {
    if (busy.current || next === null) return;
    await runLoad(async () => {
      const p = await fetchPage(next, PAGE);
      const all = [...itemsRef.current, ...p.exchanges];
      const drop = Math.max(0, all.length - WINDOW);
      setItems(all.slice(drop));
      setStart(startRef.current + drop);
      setNext(p.nextOffset ?? null);
    });
  }, [fetchPage, next, runLoad]);

  const loadEarlier = useCallback(async () => {
    if (busy.current || start === 0) return;
    await runLoad(async () => {
      const from = Math.max(0, start - PAGE);
      const p = await fetchPage(from, start - from);
      // A page may stop early (1 MiB): keep only what joins the window without a gap.
      const got = p.exchanges;
      const joined = got.length === start - from ? got : [];
      if (got.length === 0) {
        // The session changed under us (fewer exchanges): the notice offers a reload.
      } else if (joined.length === 0) {
        setItems(got);
        setStart(from);
        setNext(p.nextOffset ?? null);
      } else {
        const all = [...joined, ...itemsRef.current];
        if (all.length > WINDOW) setNext(from + WINDOW);
        setItems(all.slice(0, WINDOW));
        setStart(from);
      }
    });
  }, [fetchPage, start, runLoad]);

  const sentinel = useNearViewport<HTMLDivElement>(() => void loadMore(), '1200px', next !== null && items.length > 0);

  const jump = (n: number) => navigate({ hash: `exchange-${n}` });

  return (
    <div className="transcript-layout">
      <nav className="toc" aria-label="Table of contents">
        <h2>Exchanges{total !== null ? ` (${total})` : ''}</h2>
        {toc.length === 0 && !tocLoaded && !error && <p role="status">Loading…</p>}
        {/* Narrow screens: a jump menu instead of the list (reader.css shows one or the other). */}
        <label className="jump">
          <span className="visually-hidden">Jump to exchange</span>
          <select value={target} onChange={(ev) => void jump(Number(ev.target.value))}>
            {toc.map((e) => (
              <option key={e.number} value={e.number}>
                {`${e.continuation ? '\u2003' : ''}${e.number}. ${e.title}`}
              </option>
            ))}
          </select>
        </label>
        <ol>
          {toc.map((e) => (
            <li key={e.number} className={e.continuation ? 'cont' : undefined}>
              <a
                href={`#exchange-${e.number}`}
                aria-current={e.number === target ? 'location' : undefined}
                onClick={(ev) => {
                  ev.preventDefault();
                  void jump(e.number);
                }}
              >
                <span className="num">{e.number}.</span> {e.title}
              </a>
            </li>
          ))}
        </ol>
        {tocNext !== null && (
          <button type="button" onClick={() => void loadToc(tocNext)}>
            More exchanges
          </button>
        )}
      </nav>

      <div className="transcript" aria-label="Transcript" role="region" aria-busy={loading}>
        {changed && (
          <p role="alert" className="notice">
            This session changed since you opened it.{' '}
            <button type="button" onClick={() => window.location.reload()}>
              Reload
            </button>
          </p>
        )}
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        {start > 0 && (
          <button type="button" onClick={() => void loadEarlier()} disabled={loading}>
            Show earlier exchanges
          </button>
        )}
        {items.map((e) => (
          <ExchangeView key={e.number} exchange={e} />
        ))}
        {items.length === 0 && loading && <p role="status">Loading the transcript…</p>}
        {markdownSize === 0 && !loading && <p className="muted">This session's markdown is empty.</p>}
        <div ref={sentinel} className="sentinel" />
        {next !== null && (
          <button type="button" onClick={() => void loadMore()} disabled={loading}>
            Show more exchanges
          </button>
        )}
        {loading && items.length > 0 && <p role="status">Loading…</p>}
      </div>
    </div>
  );
}

/** One exchange; its markdown is rendered (marked + DOMPurify) once it comes near the viewport. */
function ExchangeView({ exchange }: { exchange: Exchange }) {
  const [shown, setShown] = useState(false);
  const ref = useNearViewport<HTMLDivElement>(() => setShown(true), '800px', !shown);
  const html = useMemo(() => (shown ? renderMarkdown(exchange.markdown) : ''), [shown, exchange.markdown]);
  const headingId = `exchange-${exchange.number}-title`;
  return (
    <section id={`exchange-${exchange.number}`} className="exchange" aria-labelledby={headingId}>
      <h2 id={headingId} tabIndex={-1}>
        <span className="num">{exchange.number}.</span> {exchange.title}
      </h2>
      {shown ? (
        <div className="md" dangerouslySetInnerHTML={{ __html: html }} />
      ) : (
        <div ref={ref} className="md pending" style={{ minHeight: `${Math.min(6000, Math.max(60, Math.round(exchange.size / 5)))}px` }}>
          <span className="visually-hidden">Not rendered yet</span>
        </div>
      )}
    </section>
  );
}
