import { useEffect, useId, useRef, useState, type InputHTMLAttributes, type ReactNode } from 'react';

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
      hint="Every API key of this account and every client logged in with a code (the upload CLI, the desktop app) stops working at once: make new keys and log the clients in again afterwards. Unchecked, they keep working. A new account's first password (its set-password link) revokes nothing either way."
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

/**
 * The fields of a new account: Email (fixed when `email` is given, e.g. by an invitation), Name,
 * Password.
 */
export function NewAccountFields({ email }: { email?: string | null }) {
  return (
    <>
      {email ? (
        <Field label="Email" name="email" type="email" value={email} readOnly hint="The invitation is for this address." />
      ) : (
        <Field label="Email" name="email" type="email" autoComplete="username" required />
      )}
      <Field label="Name" name="name" autoComplete="name" required />
      <Field
        label="Password"
        name="password"
        type="password"
        autoComplete="new-password"
        minLength={10}
        maxLength={256}
        required
        hint="10 to 256 characters."
      />
    </>
  );
}

/**
 * A secret shown once (a new key, an invitation link): the value as an output named `label`, a
 * Copy button and a status line that says whether copying worked (`what` names it in the hint).
 */
export function CopyOnce({ label, value, what }: { label: string; value: string; what: string }) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied(`Copying failed: select the ${what} and copy it by hand.`);
    }
  };
  return (
    <>
      <div className="token-row">
        <output aria-label={label} className="token">
          {value}
        </output>
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      <p role="status">{copied}</p>
    </>
  );
}

/** A text field of a submitted form, trimmed ('' when it is missing or a file). */
export const formText = (form: FormData, name: string): string => {
  const v = form.get(name);
  return typeof v === 'string' ? v.trim() : '';
};
