import { useEffect, useId, useReducer, useState } from 'react';
import { Link } from 'react-router';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import type { MySharesQuery, ShareAudience, ShareFieldsFragment } from '../gql/graphql';
import { CopyButton, ShareDialog } from './ShareDialog';
import { ConfirmDialog, errorText, FormError, when } from './ui';

/*
 * Share links in the console (docs/shares.md): the reader's Share dialog (ShareDialog.tsx: expiry, audience, one
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

const DeleteShareDocument = graphql(`
  mutation DeleteShare($id: ID!) {
    deleteShare(id: $id)
  }
`);

type Share = ShareFieldsFragment;

const audienceText = (a: ShareAudience) => (a === 'SIGNED_IN' ? 'Signed-in accounts' : 'Anyone with the link');

function expiryText(s: Share): string {
  if (!s.expiresAt) return 'Never';
  return Date.parse(s.expiresAt) <= Date.now() ? `Expired ${when(s.expiresAt)}` : when(s.expiresAt);
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
