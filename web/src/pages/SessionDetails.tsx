import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { gql } from '../api/graphql';
import { getCsrfToken } from '../api/http';
import { graphql } from '../gql';
import type { SessionReaderQuery } from '../gql/graphql';
import { deleteErrorText, heldText } from './Retention';
import { ConfirmDialog, errorText, Field, FormError, when } from './ui';

/*
 * The reader's Details panel (SessionReader.tsx): the session's metadata and sizes, downloads,
 * rename, tags and delete, each offered only when the caller may (Session.viewerCan).
 */

const UpdateDocument = graphql(`
  mutation UpdateSessionInReader($projectId: ID!, $id: ID!, $input: UpdateSessionInput!) {
    updateSession(projectId: $projectId, id: $id, input: $input) {
      id
      name
      userTitle
      displayTitle
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

export const bytes = (n: number) => (n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`);
const fileBase = (s: Session) =>
  (
    s.displayTitle
      .replace(/[^\p{L}\p{N}._ -]+/gu, '')
      .trim()
      .slice(0, 80) || s.id
  ).replace(/\s+/g, '-');

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

export function SessionDetails({ session, onChange }: { session: Session; onChange: (s: Session) => void }) {
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
  // Only what the caller may do is offered (Session.viewerCan: their role, their own uploads).
  const can = session.viewerCan;
  // The project's legal hold, or its team's: a delete is refused (409), and the confirmation says so first.
  const held = session.project.legalHold || (session.project.owner.__typename === 'Team' && session.project.owner.legalHold);
  const redacted = session.redactions.reduce((n, r) => n + r.count, 0);

  const update = async (input: { userTitle?: string | null; tags?: string[] }) => {
    setBusy(true);
    setError(null);
    try {
      const r = await gql(UpdateDocument, { ...vars, input });
      const u = r.updateSession;
      onChange({
        ...session,
        name: u.name,
        userTitle: u.userTitle,
        displayTitle: u.displayTitle,
        etag: u.etag,
        updatedAt: u.updatedAt,
        metadata: { ...session.metadata, tags: u.metadata.tags },
      });
      return true;
    } catch (err) {
      setError(errorText(err));
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
      void navigate(`/projects/${encodeURIComponent(session.projectId)}`, { replace: true });
    } catch (err) {
      setError(deleteErrorText(err, heldText('This session', 'its project')));
      setBusy(false);
    }
  };
  const save = (url: string, accept: string, name: string) => {
    setError(null);
    download(url, accept, name).catch((err: unknown) => setError(errorText(err)));
  };

  const rows: Array<[string, string]> = [
    ['Session name', session.name],
    ['Started', when(session.startedAt)],
    ['Ended', when(session.endedAt)],
    ['Uploaded', when(session.createdAt)],
    ['Uploaded by', session.uploadedBy?.name ?? '—'],
    ['Updated', when(session.updatedAt)],
    ['Client', [m.clientName, m.clientVersion].filter(Boolean).join(' ') || '—'],
    ['Agent', m.agentName || '—'],
    ['Models', m.llmModels.join(', ') || '—'],
    ['Git branches', m.gitBranches.join(', ') || '—'],
    ['Machine', m.machineName || '—'],
    ['Device', m.deviceId || '—'],
    ['Markdown', bytes(session.markdownSize)],
    ['Raw data', session.rawDataSize > 0 ? bytes(session.rawDataSize) : 'none'],
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
        {session.rawDataSize > 0 && (
          <a className="button" href={`${base}/raw`} download={`${fileBase(session)}.raw.jsonl`}>
            Download raw data
          </a>
        )}
        {session.sessionDataSize > 0 && (
          <button type="button" onClick={() => save(base, 'application/vnd.specstory.session-data+json', `${fileBase(session)}.session-data.json`)}>
            Download session data
          </button>
        )}
        {can.rename && (
          <button
            type="button"
            onClick={() => {
              setDraftTitle(session.displayTitle);
              setRenaming(true);
            }}
            disabled={renaming}
          >
            Rename
          </button>
        )}
        {can.delete && (
          <button type="button" className="danger" onClick={() => setConfirmDelete(true)} disabled={busy}>
            Delete session
          </button>
        )}
      </div>

      {renaming && (
        <form className="inline-form" onSubmit={(e) => void saveTitle(e)} aria-label="Rename session">
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
                {can.tag && (
                  <button type="button" className="link" aria-label={`Remove tag ${t}`} onClick={() => removeTag(t)} disabled={busy}>
                    ×
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
        {can.tag && (
          <form className="inline-form row" onSubmit={(e) => void addTag(e)}>
            <Field label="New tag" value={newTag} onChange={(e) => setNewTag(e.target.value)} maxLength={100} />
            <button type="submit" disabled={busy || !newTag.trim()}>
              Add tag
            </button>
          </form>
        )}
      </div>
      <FormError error={error} />

      {confirmDelete && (
        <ConfirmDialog
          title={`Delete “${session.displayTitle}”?`}
          confirmLabel="Delete session"
          onConfirm={() => void remove()}
          onCancel={() => setConfirmDelete(false)}
        >
          <p>
            This deletes the session for good: its transcript ({bytes(session.markdownSize)} of markdown)
            {session.rawDataSize > 0 ? `, its raw data (${bytes(session.rawDataSize)})` : ''}
            {session.sessionDataSize > 0 ? `, its session data for resuming (${bytes(session.sessionDataSize)})` : ''}, its tags and its search entries. It
            cannot be undone.
          </p>
          {held && (
            <p className="error">Its project is on legal hold: the service refuses to delete the session until an instance administrator lifts the hold.</p>
          )}
        </ConfirmDialog>
      )}
    </section>
  );
}
