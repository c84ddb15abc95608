import { useId, useState } from 'react';
import { rest, type Schema } from '../api/rest';
import { errorText, when } from './ui';

/*
 * Retention and legal hold in the console (docs/operations.md, "Retention and legal hold"): the
 * Retention choice a project's Edit dialog and a team's card share, the preview of what the next
 * sweep deletes, and the words a delete refused by a legal hold is shown with.
 */

/** The longest retention the service takes (about 100 years). */
const MAX_DAYS = 36500;

/** The service's 409 message while a project or its team is on legal hold. */
const ON_HOLD = 'Project is on legal hold';

/** What the Retention fieldset holds: a retention of its own or not, and the days as typed. */
interface RetentionChoice {
  own: boolean;
  days: string;
}

export const retentionChoice = (days: number | null | undefined): RetentionChoice => ({ own: days != null, days: days != null ? String(days) : '' });

/** The retentionDays to send (null: none of its own), or why the days typed are refused. */
export function retentionValue(c: RetentionChoice): { days: number | null } | { error: string } {
  if (!c.own) return { days: null };
  const t = c.days.trim();
  const n = Number(t);
  if (!/^\d+$/.test(t) || n < 1 || n > MAX_DAYS) return { error: `Enter a whole number of days from 1 to ${MAX_DAYS}.` };
  return { days: n };
}

export const daysText = (n: number) => (n === 1 ? '1 day' : `${n} days`);

/**
 * The Retention fieldset: no retention of its own (`inherited` says what applies then), or
 * delete sessions not updated for a number of days. `error` is the days' message, if refused.
 */
export function RetentionFieldset({
  choice,
  onChange,
  inherited,
  error,
  disabled,
}: {
  choice: RetentionChoice;
  onChange: (c: RetentionChoice) => void;
  inherited: string;
  error: string | null;
  disabled?: boolean;
}) {
  const id = useId();
  const hints = [`${id}-days-hint`, error ? `${id}-days-error` : ''].filter(Boolean).join(' ');
  return (
    <fieldset className="retention" disabled={disabled}>
      <legend>Retention</legend>
      <div className="field checkbox">
        <input
          id={`${id}-inherit`}
          type="radio"
          name={`${id}-retention`}
          checked={!choice.own}
          onChange={() => onChange({ ...choice, own: false })}
          aria-describedby={`${id}-inherit-hint`}
        />
        <label htmlFor={`${id}-inherit`}>No retention of its own</label>
        <small id={`${id}-inherit-hint`} className="hint">
          {inherited}
        </small>
      </div>
      <div className="field checkbox">
        <input id={`${id}-own`} type="radio" name={`${id}-retention`} checked={choice.own} onChange={() => onChange({ ...choice, own: true })} />
        <label htmlFor={`${id}-own`}>Delete sessions not updated for a number of days</label>
      </div>
      <div className="field retention-days">
        <label htmlFor={`${id}-days`}>Days without an update</label>
        <input
          id={`${id}-days`}
          // Text, not number: the page checks the value itself and says why it is refused.
          type="text"
          inputMode="numeric"
          autoComplete="off"
          value={choice.days}
          disabled={!choice.own}
          aria-invalid={error ? true : undefined}
          aria-describedby={hints}
          onChange={(e) => onChange({ own: true, days: e.target.value })}
        />
        <small id={`${id}-days-hint`} className="hint">
          The hourly sweep deletes a session once it has not been updated (uploaded again, renamed or retagged) for this long.
        </small>
        {error && (
          <p id={`${id}-days-error`} role="alert" className="error">
            {error}
          </p>
        )}
      </div>
    </fieldset>
  );
}

/** A legal hold that the caller cannot change, said as a notice. */
export function HoldNotice({ what }: { what: string }) {
  return (
    <p className="hold-notice" role="note">
      <span className="badge warn">Legal hold</span> {what} is on legal hold: none of its sessions can be deleted, by anyone, the retention sweep included. Only
      an instance administrator can lift it.
    </p>
  );
}

export type Preview = Schema<'RetentionPreview'>;

/** The retention preview of a project: what applies now and what the next sweep would delete. */
export async function loadPreview(projectId: string): Promise<Preview> {
  const r = await rest.get('/projects/{projectId}/retention/preview', { params: { projectId } });
  if (!r.ok || !r.data) throw new Error(r.error ?? 'The retention preview could not be read');
  return r.data;
}

const PREVIEW_ITEMS = 10;

/** "Preview": lists what the next sweep would delete of the project, under its saved retention. */
export function RetentionPreview({ projectId }: { projectId: string }) {
  const id = useId();
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const show = async () => {
    setBusy(true);
    setError(null);
    try {
      setPreview(await loadPreview(projectId));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const n = preview?.sessions.length ?? 0;
  return (
    <div className="retention-preview">
      <button type="button" onClick={() => void show()} disabled={busy} aria-describedby={`${id}-hint`}>
        Preview the next sweep
      </button>
      <small id={`${id}-hint`} className="hint">
        Under the saved retention (save a change first to see its effect).
      </small>
      <div role="status">
        {error && <p className="error">{error}</p>}
        {preview &&
          (preview.legalHold ? (
            <p>Nothing would be deleted: the project is on legal hold.</p>
          ) : preview.retentionDays === null ? (
            <p>Nothing would be deleted: no retention applies, sessions are kept.</p>
          ) : n === 0 ? (
            <p>Nothing would be deleted: no session is older than {daysText(preview.retentionDays)}.</p>
          ) : (
            <p>
              The next sweep would delete {n === 1 ? '1 session' : `${n} sessions`} not updated since {when(preview.cutoff)}
              {n > PREVIEW_ITEMS ? `; the ${PREVIEW_ITEMS} oldest:` : ':'}
            </p>
          ))}
      </div>
      {preview && !preview.legalHold && n > 0 && (
        <ul aria-label="Sessions the next sweep would delete">
          {preview.sessions.slice(0, PREVIEW_ITEMS).map((s) => (
            <li key={s.id}>
              {s.name} <span className="muted">(last updated {when(s.updatedAt)})</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** A failed delete: a legal hold's refusal as `onHold` says it, else the service's own message. */
export const deleteErrorText = (err: unknown, onHold: string): string => (err instanceof Error && err.message === ON_HOLD ? onHold : errorText(err));

/** What a delete refused by a legal hold is shown with. */
export const heldText = (what: string, held: string) =>
  `${what} cannot be deleted: ${held} is on legal hold. An instance administrator has to lift the hold first.`;
