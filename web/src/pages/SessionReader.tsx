import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router';
import { gql } from '../api/graphql';
import { getCsrfToken } from '../api/http';
import { graphql } from '../gql';
import type { SessionReaderQuery, SessionExchangesPageQuery, SessionTocQuery } from '../gql/graphql';
import { renderMarkdown } from '../markdown';
import { displayTitle } from '../../../src/domain/session';
import { ConfirmDialog, Field, FormError, when } from './ui';
import '../reader.css';

/*
 * The session reader (contract §10): heading = display title, metadata, downloads, rename, tags,
 * delete, a table of contents of the exchanges and the transcript rendered through the sanitiser
 * (../markdown.ts). A 50 MB session is never loaded whole: the transcript is read a page of
 * exchanges at a time (Session.exchanges, at most 1 MiB per page) around the exchange being read,
 * extended as the reader scrolls, trimmed far from it, and each exchange is rendered only when it
 * comes near the viewport. `#exchange-<n>` in the address opens the reader at exchange n.
 */

const ReaderDocument = graphql(`
  query SessionReader($projectId: ID!, $id: ID!) {
    session(id: $id, projectId: $projectId) {
      id
      projectId
      name
      userTitle
      etag
      createdAt
      updatedAt
      startedAt
      endedAt
      markdownSize
      rawDataSize
      sessionDataSize
      metadata {
        clientName
        clientVersion
        agentName
        deviceId
        gitBranches
        llmModels
        tags
        machineName
        title
        summary
      }
      redactions {
        rule
        count
      }
      project {
        id
        name
      }
    }
  }
`);

const TocDocument = graphql(`
  query SessionToc($projectId: ID!, $id: ID!, $offset: Int!) {
    session(id: $id, projectId: $projectId) {
      etag
      exchanges(offset: $offset, limit: 200) {
        total
        nextOffset
        exchanges {
          number
          title
          size
          continuation
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
          number
          title
          size
          continuation
          markdown
        }
      }
    }
  }
`);

const UpdateDocument = graphql(`
  mutation UpdateSessionInReader($projectId: ID!, $id: ID!, $input: UpdateSessionInput!) {
    updateSession(projectId: $projectId, id: $id, input: $input) {
      id
      name
      userTitle
      etag
      updatedAt
      metadata {
        tags
      }
    }
  }
`);

const DeleteDocument = graphql(`
  mutation DeleteSessionInReader($projectId: ID!, $id: ID!) {
    deleteSession(projectId: $projectId, id: $id)
  }
`);

type Session = NonNullable<SessionReaderQuery['session']>;
type TocEntry = NonNullable<SessionTocQuery['session']>['exchanges']['exchanges'][number];
type Exchange = NonNullable<SessionExchangesPageQuery['session']>['exchanges']['exchanges'][number];

/** Exchanges fetched per page (a page is also bounded to 1 MiB by the service). */
const PAGE = 10;
/** The first page is smaller, so the exchange asked for shows sooner; more follow as the reader scrolls. */
const FIRST_PAGE = 3;
/** Exchanges kept in the page at once; beyond, the farthest ones are dropped again. */
const WINDOW = 60;


const bytes = (n: number) => (n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`);
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
const exchangeOfHash = (hash: string): number | null => {
  const m = /^#exchange-(\d{1,9})$/.exec(hash);
  return m ? Math.max(1, Number(m[1])) : null;
};
const fileBase = (s: Session) => (displayTitle(s).replace(/[^\p{L}\p{N}._ -]+/gu, '').trim().slice(0, 80) || s.id).replace(/\s+/g, '-');

/** Fetches with the session cookie and saves the body as a file (markdown and session data need an Accept header). */
async function download(url: string, accept: string, filename: string): Promise<void> {
  const headers: Record<string, string> = { Accept: accept };
  const csrf = getCsrfToken();
  if (csrf) headers['X-CSRF-Token'] = csrf;
  // no-store: the representations of one URL share an ETag, so a revalidated cache entry of
  // another representation (JSON, markdown) could otherwise come back for this Accept.
  const res = await fetch(url, { headers, credentials: 'same-origin', cache: 'no-store' });
  if (!res.ok) throw new Error(`Download failed (${res.status})`);
  const blob = await res.blob();
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 60_000);
}

export function SessionPage() {
  const { projectId = '', sessionId = '' } = useParams();
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notFound, setNotFound] = useState(false);

  useEffect(() => {
    setSession(null);
    setError(null);
    setNotFound(false);
    gql(ReaderDocument, { projectId, id: sessionId }).then(
      (r) => setSession(r.session),
      (err: unknown) => {
        const code = (err as { code?: string }).code;
        if (code === 'NOT_FOUND' || code === 'FORBIDDEN') setNotFound(true);
        setError(message(err));
      },
    );
  }, [projectId, sessionId]);

  useEffect(() => {
    if (session) document.title = `${displayTitle(session)} · Session Archive`;
  }, [session]);

  if (notFound) {
    return (
      <>
        <h1>Session not found</h1>
        <p>
          There is no session of yours at this address. <Link to={`/projects/${encodeURIComponent(projectId)}`}>Back to the project</Link>
        </p>
      </>
    );
  }
  if (!session) {
    return error ? (
      <p role="alert" className="error">
        {error}
      </p>
    ) : (
      <p role="status">Loading session…</p>
    );
  }
  return <Reader key={session.id} session={session} onChange={setSession} />;
}

function Reader({ session, onChange }: { session: Session; onChange: (s: Session) => void }) {
  const vars = { projectId: session.projectId, id: session.id };
  const title = displayTitle(session);
  return (
    <article className="reader" aria-labelledby="session-title">
      <p className="crumbs">
        <Link to={`/projects/${encodeURIComponent(session.projectId)}`}>{session.project.name}</Link>
      </p>
      <h1 id="session-title">{title}</h1>
      <SessionDetails session={session} onChange={onChange} />
      <Transcript vars={vars} markdownSize={session.markdownSize} etag={session.etag} />
    </article>
  );
}

function SessionDetails({ session, onChange }: { session: Session; onChange: (s: Session) => void }) {
  const navigate = useNavigate();
  const [renaming, setRenaming] = useState(false);
  const [draftTitle, setDraftTitle] = useState('');
  const [newTag, setNewTag] = useState('');
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const vars = { projectId: session.projectId, id: session.id };
  const base = `/api/v1/projects/${encodeURIComponent(session.projectId)}/sessions/${encodeURIComponent(session.id)}`;
  const m = session.metadata;
  const redacted = session.redactions.reduce((n, r) => n + r.count, 0);

  const update = async (input: { userTitle?: string | null; tags?: string[] }) => {
    setBusy(true);
    setError(null);
    try {
      const r = await gql(UpdateDocument, { ...vars, input });
      const u = r.updateSession;
      onChange({ ...session, name: u.name, userTitle: u.userTitle, etag: u.etag, updatedAt: u.updatedAt, metadata: { ...session.metadata, tags: u.metadata.tags } });
      return true;
    } catch (err) {
      setError(message(err));
      return false;
    } finally {
      setBusy(false);
    }
  };

  const saveTitle = async (e: FormEvent) => {
    e.preventDefault();
    const t = draftTitle.trim();
    if (await update({ userTitle: t ? t : null })) setRenaming(false);
  };
  const addTag = async (e: FormEvent) => {
    e.preventDefault();
    const t = newTag.trim();
    if (!t) return;
    if (m.tags.includes(t)) {
      setError(`The session already has the tag ${t}.`);
      return;
    }
    if (await update({ tags: [...m.tags, t] })) setNewTag('');
  };
  const removeTag = (t: string) => void update({ tags: m.tags.filter((x) => x !== t) });
  const remove = async () => {
    setConfirmDelete(false);
    setBusy(true);
    try {
      await gql(DeleteDocument, vars);
      navigate(`/projects/${encodeURIComponent(session.projectId)}`, { replace: true });
    } catch (err) {
      setError(message(err));
      setBusy(false);
    }
  };
  const save = (url: string, accept: string, name: string) => {
    setError(null);
    download(url, accept, name).catch((err: unknown) => setError(message(err)));
  };

  const rows: Array<[string, string]> = [
    ['Session name', session.name],
    ['Started', when(session.startedAt)],
    ['Ended', when(session.endedAt)],
    ['Uploaded', when(session.createdAt)],
    ['Updated', when(session.updatedAt)],
    ['Client', [m.clientName, m.clientVersion].filter(Boolean).join(' ') || '—'],
    ['Agent', m.agentName || '—'],
    ['Models', m.llmModels.join(', ') || '—'],
    ['Git branches', m.gitBranches.join(', ') || '—'],
    ['Machine', m.machineName || '—'],
    ['Device', m.deviceId || '—'],
    ['Markdown', bytes(session.markdownSize)],
    ['Raw data', bytes(session.rawDataSize)],
    ['Session data', session.sessionDataSize > 0 ? bytes(session.sessionDataSize) : 'none'],
  ];

  return (
    <section className="details" aria-label="Session details">
      {m.summary && <p className="summary">{m.summary}</p>}
      <dl className="meta">
        {rows.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      {redacted > 0 && (
        <p>
          <span className="badge warn" title={session.redactions.map((r) => `${r.rule}: ${r.count}`).join(', ')}>
            {redacted === 1 ? '1 secret redacted' : `${redacted} secrets redacted`}
          </span>
        </p>
      )}

      <div className="actions">
        <button type="button" onClick={() => save(base, 'text/markdown', `${fileBase(session)}.md`)}>
          Download markdown
        </button>
        <a className="button" href={`${base}/raw`} download={`${fileBase(session)}.raw.jsonl`}>
          Download raw data
        </a>
        {session.sessionDataSize > 0 && (
          <button type="button" onClick={() => save(base, 'application/vnd.specstory.session-data+json', `${fileBase(session)}.session-data.json`)}>
            Download session data
          </button>
        )}
        <button
          type="button"
          onClick={() => {
            setDraftTitle(displayTitle(session));
            setRenaming(true);
          }}
          disabled={renaming}
        >
          Rename
        </button>
        <button type="button" className="danger" onClick={() => setConfirmDelete(true)} disabled={busy}>
          Delete session
        </button>
      </div>

      {renaming && (
        <form className="inline-form" onSubmit={saveTitle} aria-label="Rename session">
          <Field
            label="Title"
            value={draftTitle}
            onChange={(e) => setDraftTitle(e.target.value)}
            maxLength={255}
            hint="Shown instead of the uploaded name. Leave empty to go back to it."
            autoFocus
          />
          <div className="actions">
            <button type="submit" disabled={busy}>
              Save title
            </button>
            <button type="button" onClick={() => setRenaming(false)}>
              Cancel
            </button>
          </div>
        </form>
      )}

      <div className="tags">
        <h2 id="tags-heading">Tags</h2>
        {m.tags.length === 0 ? (
          <p className="muted">No tags.</p>
        ) : (
          <ul className="tag-list" aria-labelledby="tags-heading">
            {m.tags.map((t) => (
              <li key={t}>
                <span className="badge">{t}</span>
                <button type="button" className="link" aria-label={`Remove tag ${t}`} onClick={() => removeTag(t)} disabled={busy}>
                  ×
                </button>
              </li>
            ))}
          </ul>
        )}
        <form className="inline-form row" onSubmit={addTag}>
          <Field label="New tag" value={newTag} onChange={(e) => setNewTag(e.target.value)} maxLength={100} />
          <button type="submit" disabled={busy || !newTag.trim()}>
            Add tag
          </button>
        </form>
      </div>
      <FormError error={error} />

      {confirmDelete && (
        <ConfirmDialog title={`Delete “${displayTitle(session)}”?`} confirmLabel="Delete session" onConfirm={remove} onCancel={() => setConfirmDelete(false)}>
          <p>
            This deletes the session for good: its transcript ({bytes(session.markdownSize)} of markdown), its raw data ({bytes(session.rawDataSize)})
            {session.sessionDataSize > 0 ? `, its session data for resuming (${bytes(session.sessionDataSize)})` : ''}, its tags and its search
            entries. It cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}

/** Calls `onVisible` while `ref`'s element is within `margin` of the viewport. */
function useNearViewport<T extends Element>(onVisible: () => void, margin: string, enabled = true) {
  const ref = useRef<T>(null);
  const cb = useRef(onVisible);
  cb.current = onVisible;
  useEffect(() => {
    const el = ref.current;
    if (!el || !enabled) return;
    const io = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && cb.current(), { rootMargin: margin });
    io.observe(el);
    return () => io.disconnect();
  }, [margin, enabled]);
  return ref;
}

interface Vars {
  projectId: string;
  id: string;
}

function Transcript({ vars, markdownSize, etag }: { vars: Vars; markdownSize: number; etag: string }) {
  const location = useLocation();
  const navigate = useNavigate();
  const asked = exchangeOfHash(location.hash);
  const target = asked ?? 1;

  // Table of contents: 200 entries per request, more on demand.
  const [toc, setToc] = useState<TocEntry[]>([]);
  const [tocNext, setTocNext] = useState<number | null>(null);
  const [total, setTotal] = useState<number | null>(null);
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
      gql(TocDocument, { ...vars, offset }).then(
        (r) => {
          if (!r.session) throw new Error('Session not found');
          seeVersion(r.session.etag);
          const p = r.session.exchanges;
          setTotal(p.total);
          setToc((old) => (offset === 0 ? p.exchanges : [...old, ...p.exchanges]));
          setTocNext(p.nextOffset ?? null);
        },
        (err: unknown) => setError(message(err)),
      ),
    [vars.projectId, vars.id, seeVersion],
  );

  useEffect(() => {
    void loadToc(0);
  }, [loadToc]);

  const fetchPage = useCallback(
    async (offset: number, limit: number) => {
      const r = await gql(PageDocument, { ...vars, offset, limit });
      if (!r.session) throw new Error('Session not found');
      seeVersion(r.session.etag);
      setTotal(r.session.exchanges.total);
      return r.session.exchanges;
    },
    [vars.projectId, vars.id, seeVersion],
  );

  /** Starts the window at exchange `n` (1-based); `focus`: scroll to it and focus its heading. */
  const openAt = useCallback(
    async (n: number, focus: boolean) => {
      busy.current = true;
      setLoading(true);
      setError(null);
      try {
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
      } catch (err) {
        setError(message(err));
      } finally {
        busy.current = false;
        setLoading(false);
      }
    },
    [fetchPage],
  );

  // Open at the exchange the address names; later hash changes jump (within the window: scroll).
  const itemsRef = useRef(items);
  itemsRef.current = items;
  const startRef = useRef(start);
  startRef.current = start;
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
    busy.current = true;
    setLoading(true);
    try {
      const p = await fetchPage(next, PAGE);
      const all = [...itemsRef.current, ...p.exchanges];
      const drop = Math.max(0, all.length - WINDOW);
      setItems(all.slice(drop));
      setStart(startRef.current + drop);
      setNext(p.nextOffset ?? null);
    } catch (err) {
      setError(message(err));
    } finally {
      busy.current = false;
      setLoading(false);
    }
  }, [fetchPage, next]);

  const loadEarlier = useCallback(async () => {
    if (busy.current || start === 0) return;
    busy.current = true;
    setLoading(true);
    try {
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
    } catch (err) {
      setError(message(err));
    } finally {
      busy.current = false;
      setLoading(false);
    }
  }, [fetchPage, start]);

  const sentinel = useNearViewport<HTMLDivElement>(() => void loadMore(), '1200px', next !== null && items.length > 0);

  const jump = (n: number) => navigate({ hash: `exchange-${n}` });

  return (
    <div className="transcript-layout">
      <nav className="toc" aria-label="Table of contents">
        <h2>Exchanges{total !== null ? ` (${total})` : ''}</h2>
        {toc.length === 0 && total === null && !error && <p role="status">Loading…</p>}
        <ol>
          {toc.map((e) => (
            <li key={e.number} className={e.continuation ? 'cont' : undefined}>
              <a
                href={`#exchange-${e.number}`}
                aria-current={e.number === target ? 'location' : undefined}
                onClick={(ev) => {
                  ev.preventDefault();
                  jump(e.number);
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
