import { useEffect, useState, type FormEvent } from 'react';
import { Navigate, useSearchParams } from 'react-router';
import { formText, rest } from '../api/rest';
import { useSession } from '../session';
import { Field, FormError, NewAccountFields } from './ui';

/** `/sign-in`: the sign-in form, or "Create the first account" while no account exists. */
export function SignInPage() {
  const { user, needsSetup, signupEnabled } = useSession();
  const [signingUp, setSigningUp] = useState(false);
  const [params] = useSearchParams();
  const next = safeNext(params.get('next'));
  useEffect(() => {
    document.title = `${needsSetup ? 'Create the first account' : 'Sign in'} · Session Archive`;
  }, [needsSetup]);
  // A share link's page (/s/<token>) and a connector's consent page (/oauth/authorize) are not part of this app: they are loaded anew.
  const outside = next.startsWith('/s/') || next.startsWith('/oauth/');
  useEffect(() => {
    if (user && outside) window.location.replace(next);
  }, [user, outside, next]);
  if (user === undefined) return <p role="status">Loading…</p>;
  if (user && outside) return <p role="status">{next.startsWith('/s/') ? 'Opening the shared session…' : 'Continuing…'}</p>;
  if (user) return <Navigate to={next} replace />;
  return (
    <main id="main" className="narrow">
      {needsSetup ? <NewAccount first /> : signingUp ? <NewAccount first={false} /> : <SignInForm purpose={purposeOf(next)} />}
      {!needsSetup && signupEnabled && (
        <p>
          <button type="button" className="link" onClick={() => setSigningUp(!signingUp)}>
            {signingUp ? 'I have an account' : 'Create an account'}
          </button>
        </p>
      )}
    </main>
  );
}

/** Only same-origin paths of the console (never `//host` or a URL). */
function safeNext(next: string | null): string {
  return next && /^\/(?![/\\])/.test(next) && !next.includes('\\') ? next : '/';
}

/** Why a link sent the person here, for the pages a sign-in is a detour to (null: the console itself). */
function purposeOf(next: string): string | null {
  if (next.startsWith('/oauth/'))
    return 'Sign in to connect an assistant to your archive. The next page says what it asks for; nothing is shared until you allow it.';
  if (next.startsWith('/s/')) return 'Sign in to open the session shared with you.';
  if (next.startsWith('/cli-login')) return 'Sign in to log in the upload CLI or the desktop app.';
  return null;
}

function SignInForm({ purpose }: { purpose: string | null }) {
  const { refresh } = useSession();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    const r = await rest.post('/auth/sign-in', { body: { email: formText(form, 'email'), password: formText(form, 'password') } });
    // The session (and its CSRF token) is read back before any page calls the API.
    if (r.ok) await refresh();
    else setError(r.error ?? 'Sign-in failed');
    setBusy(false);
  };
  return (
    <>
      <h1>Sign in</h1>
      {purpose && <p id="sign-in-purpose">{purpose}</p>}
      <form onSubmit={(e) => void submit(e)}>
        <Field label="Email" name="email" type="email" autoComplete="username" required />
        <Field label="Password" name="password" type="password" autoComplete="current-password" required />
        <FormError error={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <ForgotPassword />
    </>
  );
}

/** No password (a new account) or a forgotten one: where a one-time link to set one comes from. */
function ForgotPassword() {
  return (
    <details className="forgot">
      <summary>Forgot password?</summary>
      <p>
        Passwords are set through a one-time link (valid for an hour). Ask an administrator for one: they make it on the console&apos;s <strong>Users</strong>{' '}
        page (<strong>Reset password</strong>). Whoever runs the server can also print one:
      </p>
      <pre className="command">
        <code>npm run cli -- users reset-password --email you@example.com</code>
      </pre>
    </details>
  );
}

/** First run (the first account is an admin), or self sign-up when the server allows it. */
function NewAccount({ first }: { first: boolean }) {
  const { refresh } = useSession();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    const account = { email: formText(form, 'email'), name: formText(form, 'name'), password: formText(form, 'password') };
    const r = first ? await rest.post('/auth/setup', { body: account }) : await rest.post('/auth/sign-up', { body: account });
    if (r.ok) await refresh();
    else setError(r.error ?? 'The account could not be created');
    setBusy(false);
  };
  return (
    <>
      <h1>{first ? 'Create the first account' : 'Create an account'}</h1>
      {first && <p>No account exists yet. This first account is an administrator.</p>}
      <form onSubmit={(e) => void submit(e)}>
        <NewAccountFields />
        <FormError error={error} />
        <button type="submit" disabled={busy}>
          Create account
        </button>
      </form>
    </>
  );
}
