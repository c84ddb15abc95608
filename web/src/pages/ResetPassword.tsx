import { useEffect, useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { formText, rest } from '../api/rest';
import { Field, FormError, RevokeCredentialsField } from './ui';

/** `/reset-password?token=…`: the one-time link printed by `users reset-password` (valid 1 hour). */
export function ResetPasswordPage() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  // Once set, the page says so in its heading too, not only below a request to choose one.
  const heading = done ? 'Password set' : 'Choose a new password';
  useEffect(() => {
    document.title = `${heading} · Session Archive`;
  }, [heading]);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const revokeCredentials = form.get('revokeCredentials') === 'on';
    const r = await rest.post('/auth/reset-password', { body: { token, password: formText(form, 'password'), revokeCredentials } });
    if (r.ok) setDone(true);
    else setError(r.error ?? 'The password could not be set');
  };
  return (
    <main id="main" className="narrow">
      <h1>{heading}</h1>
      {done ? (
        <p role="status">
          Your password is set. <Link to="/sign-in">Sign in</Link>
        </p>
      ) : !token ? (
        <p role="alert" className="error">
          This link has no token. Ask an administrator for a new one.
        </p>
      ) : (
        <form onSubmit={(e) => void submit(e)}>
          <Field
            label="New password"
            name="password"
            type="password"
            autoComplete="new-password"
            minLength={10}
            maxLength={256}
            required
            hint="10 to 256 characters."
          />
          <RevokeCredentialsField />
          <FormError error={error} />
          <button type="submit">Set password</button>
        </form>
      )}
    </main>
  );
}
