import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { formText, rest } from '../api/rest';
import { useSession } from '../session';
import { ConfirmDialog, Field, FormError, RevokeCredentialsField } from './ui';

/** `/settings/account`: change password, sign out everywhere. */
export function AccountPage() {
  const { user, signedOut } = useSession();
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);

  const changePassword = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const formEl = e.currentTarget;
    const form = new FormData(formEl);
    setError(null);
    setDone(null);
    if (form.get('newPassword') !== form.get('confirmPassword')) {
      setError('The new passwords do not match.');
      return;
    }
    const revokeCredentials = form.get('revokeCredentials') === 'on';
    const r = await rest.post('/auth/password', {
      body: { currentPassword: formText(form, 'currentPassword'), newPassword: formText(form, 'newPassword'), revokeCredentials },
    });
    if (r.ok) {
      formEl.reset();
      setDone(
        revokeCredentials
          ? 'Password changed. Your other sessions were signed out and your API keys and logged-in clients revoked.'
          : 'Password changed. Your other sessions were signed out; your API keys and logged-in clients keep working.',
      );
    } else setError(r.error ?? 'The password could not be changed');
  };

  const signOutEverywhere = async () => {
    setConfirming(false);
    const r = await rest.post('/auth/sign-out-everywhere');
    if (!r.ok) {
      setError(r.error ?? 'Signing out failed');
      return;
    }
    signedOut();
    void navigate('/sign-in');
  };

  return (
    <>
      <h1>Account</h1>
      {user && (
        <p>
          Signed in as {user.name} ({user.email}), {user.role === 'admin' ? 'administrator' : 'member'}.
        </p>
      )}
      <section aria-labelledby="pw-title" className="card">
        <h2 id="pw-title">Change password</h2>
        <form onSubmit={(e) => void changePassword(e)}>
          <Field label="Current password" name="currentPassword" type="password" autoComplete="current-password" required />
          <Field
            label="New password"
            name="newPassword"
            type="password"
            autoComplete="new-password"
            minLength={10}
            maxLength={256}
            required
            hint="10 to 256 characters."
          />
          <Field label="Confirm new password" name="confirmPassword" type="password" autoComplete="new-password" required />
          <RevokeCredentialsField />
          <FormError error={error} />
          <p role="status">{done}</p>
          <button type="submit">Change password</button>
        </form>
      </section>
      <section aria-labelledby="everywhere-title" className="card">
        <h2 id="everywhere-title">Sign out everywhere</h2>
        <p>Ends every browser session of this account, this one included. API keys and logged-in clients keep working.</p>
        <button type="button" className="danger" onClick={() => setConfirming(true)}>
          Sign out everywhere
        </button>
      </section>
      {confirming && (
        <ConfirmDialog
          title="Sign out everywhere?"
          confirmLabel="Sign out all sessions"
          onCancel={() => setConfirming(false)}
          onConfirm={() => void signOutEverywhere()}
        >
          <p>Every browser signed in to this account has to sign in again.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
