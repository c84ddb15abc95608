import { useEffect, useId, useRef, type InputHTMLAttributes, type ReactNode } from 'react';

/** A labelled input (the label is its accessible name), with an optional hint. */
export function Field({ label, hint, ...input }: { label: string; hint?: string } & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} aria-describedby={hint ? `${id}-hint` : undefined} {...input} />
      {hint && (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

/** A labelled checkbox (the label is its accessible name), with an optional hint. */
export function CheckboxField({ label, hint, ...input }: { label: string; hint?: string } & Omit<InputHTMLAttributes<HTMLInputElement>, 'type'>) {
  const id = useId();
  return (
    <div className="field checkbox">
      <input id={id} type="checkbox" aria-describedby={hint ? `${id}-hint` : undefined} {...input} />
      <label htmlFor={id}>{label}</label>
      {hint && (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

/**
 * The choice a new password offers (change and reset): also revoke the account's API keys and
 * logged-in clients. Checked by default: a password that leaked may have been used to make them.
 */
export function RevokeCredentialsField() {
  return (
    <CheckboxField
      label="Also revoke API keys and logged-in clients"
      name="revokeCredentials"
      defaultChecked
      hint="Every API key and every client logged in with a code (the upload CLI, the desktop app) stops working; make new ones afterwards."
    />
  );
}

export function FormError({ error }: { error: string | null }) {
  return error ? (
    <p role="alert" className="error">
      {error}
    </p>
  ) : null;
}

/** A native <dialog> shown modal while mounted (focus trapping and Escape come with it): its ref. */
export function useModalDialog() {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  return ref;
}

/** A modal confirmation (native <dialog>: focus trapping and Escape come with it). */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  onConfirm,
  onCancel,
}: {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useModalDialog();
  const titleId = useId();
  return (
    <dialog ref={ref} aria-labelledby={titleId} onCancel={onCancel}>
      <h2 id={titleId}>{title}</h2>
      {children}
      <div className="actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" className="danger" onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** ISO timestamp → local date and time, or a dash. */
export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

/** What a failed request or action says to the person (the service's own message). */
export const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));
