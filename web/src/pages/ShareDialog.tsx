import { useEffect, useId, useState, type FormEvent } from 'react';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import type { SessionTocQuery, ShareAudience, ShareFieldsFragment } from '../gql/graphql';
import { TocDocument } from './Transcript';
import { errorText, FormError, useModalDialog, when } from './ui';

/*
 * The reader's Share dialog (docs/shares.md): expiry, audience, one `Show exchange <n>` checkbox
 * per exchange, a preview of what a viewer sees, then the link with Copy. The session's links and
 * /settings/shares are in Shares.tsx.
 */

const CreateShareDocument = graphql(`
  mutation CreateShare($projectId: ID!, $sessionId: ID!, $input: CreateShareInput) {
    createShare(projectId: $projectId, sessionId: $sessionId, input: $input) {
      ...ShareFields
    }
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

/** Copy to the clipboard, saying in a status line whether it worked. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
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
