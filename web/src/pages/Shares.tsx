import { useEffect, useId, useReducer, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import type { MySharesQuery, SessionTocQuery, ShareAudience, ShareFieldsFragment } from '../gql/graphql';
import { TocDocument } from './Transcript';
import { ConfirmDialog, errorText, FormError, useModalDialog, when } from './ui';

/*
 * Share links in the console (docs/shares.md): the reader's Share dialog (expiry, audience, one
 * `Show exchange <n>` checkbox per exchange, a preview of what a viewer sees, then the link with
 * Copy), the session's links with Revoke link, and /settings/shares with all of the caller's links.
 * Every rule (who may share, the server's switches, the refusal of unmasked secrets) is the
 * service's: the console shows its message.
 */

graphql(`
  fragment ShareFields on Share {
    id
    url
    projectId
    sessionId
    sessionTitle
    createdAt
    snapshotAt
    expiresAt
    audience
    hiddenExchanges
    exchangeCount
    views
  }
`);

const SessionSharesDocument = graphql(`
  query SessionShares($projectId: ID!, $id: ID!) {
    session(id: $id, projectId: $projectId) {
      id
      shares {
        ...ShareFields
      }
    }
  }
`);

const MySharesDocument = graphql(`
  query MyShares {
    shares {
      ...ShareFields
      session {
        id
        project {
          id
          name
        }
      }
    }
  }
`);

const CreateShareDocument = graphql(`
  mutation CreateShare($projectId: ID!, $sessionId: ID!, $input: CreateShareInput) {
    createShare(projectId: $projectId, sessionId: $sessionId, input: $input) {
      ...ShareFields
    }
  }
`);

const DeleteShareDocument = graphql(`
  mutation DeleteShare($id: ID!) {
    deleteShare(id: $id)
  }
`);

type Share = ShareFieldsFragment;
type TocEntry = NonNullable<SessionTocQuery['session']>['exchanges']['exchanges'][number];

const EXPIRY_CHOICES: Array<[number, string]> = [
  [1, 'In 1 day'],
  [7, 'In 7 days'],
  [30, 'In 30 days'],
  [90, 'In 90 days'],
];
const AUDIENCE_CHOICES: Array<[ShareAudience, string]> = [
  ['PUBLIC', 'Anyone with the link'],
  ['SIGNED_IN', 'Signed-in accounts of this archive'],
];
const audienceText = (a: ShareAudience) => (a === 'SIGNED_IN' ? 'Signed-in accounts' : 'Anyone with the link');

function expiryText(s: Share): string {
  if (!s.expiresAt) return 'Never';
  return Date.parse(s.expiresAt) <= Date.now() ? `Expired ${when(s.expiresAt)}` : when(s.expiresAt);
}

/** Copy to the clipboard, saying in a status line whether it worked. */
function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [said, setSaid] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setSaid('Copied to the clipboard.');
    } catch {
      setSaid('Copying failed: select the link and copy it by hand.');
    }
  };
  return (
    <>
      <button type="button" onClick={() => void copy()}>
        {label}
      </button>
      <span role="status" className="muted">
        {said}
      </span>
    </>
  );
}

/** The session's exchanges (number and title), every page of the table of contents. */
function useExchanges(projectId: string, id: string) {
  const [items, setItems] = useState<TocEntry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    (async () => {
      const all: TocEntry[] = [];
      for (let offset: number | null = 0; offset !== null;) {
        const r: SessionTocQuery = await gql(TocDocument, {
          projectId,
          id,
          offset,
        });
        if (!r.session) throw new Error('Session not found');
        all.push(...r.session.exchanges.exchanges);
        offset = r.session.exchanges.nextOffset ?? null;
      }
      if (live) setItems(all);
    })().catch((err: unknown) => live && setError(errorText(err)));
    return () => {
      live = false;
    };
  }, [projectId, id]);
  return { items, error };
}

/** The reader's Share dialog: choose, preview, create; then the link with Copy. */
export function ShareDialog({
  projectId,
  sessionId,
  title,
  onCreated,
  onClose,
}: {
  projectId: string;
  sessionId: string;
  title: string;
  onCreated: () => void;
  onClose: () => void;
}) {
  const ref = useModalDialog();
  const titleId = useId();
  const previewId = useId();
  const { items, error: loadError } = useExchanges(projectId, sessionId);
  const [expires, setExpires] = useState(30);
  const [audience, setAudience] = useState<ShareAudience>('PUBLIC');
  const [hidden, setHidden] = useState<Set<number>>(new Set());
  const [preview, setPreview] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<Share | null>(null);

  const toggle = (n: number, show: boolean) =>
    setHidden((old) => {
      const next = new Set(old);
      if (show) next.delete(n);
      else next.add(n);
      return next;
    });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await gql(CreateShareDocument, {
        projectId,
        sessionId,
        input: {
          expiresInDays: expires,
          audience,
          hiddenExchanges: [...hidden].sort((a, b) => a - b),
        },
      });
      setCreated(r.createShare);
      onCreated();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const shown = items ? items.length - items.filter((e) => hidden.has(e.number)).length : 0;

  return (
    <dialog ref={ref} aria-labelledby={titleId} onCancel={onClose} className="share-dialog">
      <h2 id={titleId}>Share this session</h2>
      {created ? (
        <section aria-label="The new link">
          <p>
            Anyone {created.audience === 'SIGNED_IN' ? 'signed in to this archive ' : ''}
            with this link sees the session as it is now, without the exchanges you hid
            {created.expiresAt ? `, until ${when(created.expiresAt)}` : ''}.
          </p>
          <div className="token-row">
            <output aria-label="Share link" className="token">
              {created.url}
            </output>
            <CopyButton text={created.url} />
          </div>
        </section>
      ) : (
        <form onSubmit={(e) => void submit(e)} aria-label="Share options">
          <p className="muted">A read-only snapshot of “{title}” at an unguessable link. Later changes to the session are not shown.</p>
          <div className="field">
            <label htmlFor={`${titleId}-expires`}>Expires</label>
            <select id={`${titleId}-expires`} value={expires} onChange={(e) => setExpires(Number(e.target.value))}>
              {EXPIRY_CHOICES.map(([days, text]) => (
                <option key={days} value={days}>
                  {text}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={`${titleId}-audience`}>Audience</label>
            <select id={`${titleId}-audience`} value={audience} onChange={(e) => setAudience(e.target.value as ShareAudience)}>
              {AUDIENCE_CHOICES.map(([value, text]) => (
                <option key={value} value={value}>
                  {text}
                </option>
              ))}
            </select>
          </div>
          <fieldset className="share-exchanges">
            <legend>Exchanges</legend>
            {loadError && (
              <p role="alert" className="error">
                {loadError}
              </p>
            )}
            {!items && !loadError && <p role="status">Loading exchanges…</p>}
            {items && (
              <div className="actions">
                <button type="button" onClick={() => setHidden(new Set())} aria-describedby={`${titleId}-count`}>
                  Show all
                </button>
                <button type="button" onClick={() => setHidden(new Set(items.map((e) => e.number)))} aria-describedby={`${titleId}-count`}>
                  Hide all
                </button>
                <span id={`${titleId}-count`} className="muted" role="status">
                  {shown} of {items.length} shown
                </span>
              </div>
            )}
            <div className="exchange-list">
              {items?.map((e) => (
                <div className="field checkbox" key={e.number}>
                  <input
                    id={`${titleId}-x${e.number}`}
                    type="checkbox"
                    checked={!hidden.has(e.number)}
                    onChange={(ev) => toggle(e.number, ev.target.checked)}
                    aria-describedby={`${titleId}-x${e.number}-title`}
                  />
                  <label htmlFor={`${titleId}-x${e.number}`}>Show exchange {e.number}</label>
                  <span id={`${titleId}-x${e.number}-title`} className="muted">
                    {e.continuation ? '(continued) ' : ''}
                    {e.title}
                  </span>
                </div>
              ))}
            </div>
          </fieldset>
          <FormError error={error} />
          <div className="actions">
            <button type="button" aria-expanded={preview} aria-controls={previewId} onClick={() => setPreview((p) => !p)} disabled={!items}>
              Preview as viewer
            </button>
            <button type="submit" disabled={busy || !items}>
              Create link
            </button>
          </div>
          <div id={previewId} hidden={!preview}>
            {preview && items && (
              <section className="card share-preview" aria-labelledby={`${previewId}-h`}>
                <h3 id={`${previewId}-h`}>What a viewer sees</h3>
                <p>
                  “{title}”: {shown} of {items.length} exchanges shown.{' '}
                  {audience === 'SIGNED_IN' ? 'Only signed-in accounts can open it.' : 'Anyone with the link can open it.'}
                </p>
                <ol tabIndex={0} aria-label="Exchanges as a viewer sees them">
                  {items.map((e) => (
                    <li key={e.number} value={e.number}>
                      {hidden.has(e.number) ? <em>Hidden by the owner</em> : e.title}
                    </li>
                  ))}
                </ol>
              </section>
            )}
          </div>
        </form>
      )}
      <div className="actions">
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </dialog>
  );
}

/** Revoke after confirming; `onDone` reloads the list. */
function useRevoke(onDone: () => void, setError: (e: string | null) => void) {
  const [revoking, setRevoking] = useState<Share | null>(null);
  const dialog = revoking && (
    <ConfirmDialog
      title="Revoke this link?"
      confirmLabel="Revoke"
      onCancel={() => setRevoking(null)}
      onConfirm={() => {
        const s = revoking;
        setRevoking(null);
        gql(DeleteShareDocument, { id: s.id }).then(onDone, (err: unknown) => setError(errorText(err)));
      }}
    >
      <p>Whoever has the link gets “not found” from their next visit on. A new link to the session has a different address.</p>
    </ConfirmDialog>
  );
  return { ask: setRevoking, dialog };
}

/** The reader's part: the Share button and the links the caller made of this session. */
export function SessionShares({ projectId, sessionId, title }: { projectId: string; sessionId: string; title: string }) {
  const [shares, setShares] = useState<Share[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [sharing, setSharing] = useState(false);
  const [version, reload] = useReducer((n: number) => n + 1, 0);
  useEffect(() => {
    let live = true;
    gql(SessionSharesDocument, { projectId, id: sessionId }).then(
      (r) => live && setShares(r.session?.shares ?? []),
      (err: unknown) => live && setError(errorText(err)),
    );
    return () => {
      live = false;
    };
  }, [projectId, sessionId, version]);
  const revoke = useRevoke(reload, setError);

  return (
    <section className="shares" aria-labelledby="shares-heading">
      <h2 id="shares-heading">Share links</h2>
      <button type="button" onClick={() => setSharing(true)}>
        Share
      </button>
      <FormError error={error} />
      {shares === null ? (
        !error && <p role="status">Loading links…</p>
      ) : shares.length === 0 ? (
        <p className="muted">No links to this session.</p>
      ) : (
        <ShareTable shares={shares} onRevoke={revoke.ask} caption="Links to this session" />
      )}
      {sharing && (
        <ShareDialog
          projectId={projectId}
          sessionId={sessionId}
          title={title}
          onCreated={reload}
          onClose={() => {
            setSharing(false);
            reload();
          }}
        />
      )}
      {revoke.dialog}
    </section>
  );
}

type ListedShare = Share & {
  session?: MySharesQuery['shares'][number]['session'];
};

function ShareTable({
  shares,
  onRevoke,
  caption,
  withSession = false,
}: {
  shares: ListedShare[];
  onRevoke: (s: Share) => void;
  caption: string;
  withSession?: boolean;
}) {
  const idBase = useId();
  return (
    <table className="share-table stack">
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          {withSession && <th scope="col">Session</th>}
          <th scope="col">Link</th>
          <th scope="col">Created</th>
          <th scope="col">Expires</th>
          <th scope="col">Audience</th>
          <th scope="col">Hidden exchanges</th>
          <th scope="col">Views</th>
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {shares.map((s) => (
          <tr key={s.id}>
            {withSession && (
              <th scope="row">
                <Link to={`/projects/${encodeURIComponent(s.projectId)}/sessions/${encodeURIComponent(s.sessionId)}`}>{s.sessionTitle}</Link>
                {s.session && <span className="muted"> ({s.session.project.name})</span>}
              </th>
            )}
            <td data-label="Link">
              <code id={`${idBase}-${s.id}`} className="share-url">
                {s.url}
              </code>{' '}
              <CopyButton text={s.url} />
            </td>
            <td data-label="Created">{when(s.createdAt)}</td>
            <td data-label="Expires">{expiryText(s)}</td>
            <td data-label="Audience">{audienceText(s.audience)}</td>
            <td data-label="Hidden exchanges">{s.hiddenExchanges.length ? s.hiddenExchanges.join(', ') : 'None'}</td>
            <td data-label="Views">{s.views}</td>
            <td>
              <button type="button" className="danger" aria-describedby={`${idBase}-${s.id}`} onClick={() => onRevoke(s)}>
                Revoke link
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** `/settings/shares`: every link the caller made, with its session, expiry and views. */
export function SharesPage() {
  const [shares, setShares] = useState<ListedShare[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [version, reload] = useReducer((n: number) => n + 1, 0);
  useEffect(() => {
    let live = true;
    gql(MySharesDocument).then(
      (r) => live && setShares(r.shares),
      (err: unknown) => live && setError(errorText(err)),
    );
    return () => {
      live = false;
    };
  }, [version]);
  const revoke = useRevoke(reload, setError);
  return (
    <>
      <h1>Shared links</h1>
      <p>
        Read-only links to your sessions, newest first. Make one with <strong>Share</strong> in a session&apos;s reader; a revoked or expired link answers “not
        found”.
      </p>
      <FormError error={error} />
      {shares === null ? (
        !error && <p role="status">Loading links…</p>
      ) : shares.length === 0 ? (
        <p>No shared links yet.</p>
      ) : (
        <ShareTable shares={shares} onRevoke={revoke.ask} caption="Your shared links" withSession />
      )}
      {revoke.dialog}
    </>
  );
}
