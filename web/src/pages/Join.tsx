import { useEffect, useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { gql } from '../api/graphql';
import { formText, rest, type Data } from '../api/rest';
import { graphql } from '../gql';
import { useSession } from '../session';
import { errorText, FormError, NewAccountFields } from './ui';

/*
 * `/join?token=…`: an invitation to a team (a one-time link, valid 7 days). The page shows the team
 * and the role before anyone signs in; a signed-in person joins with one button; someone signed out
 * signs in (and comes back here) or creates an account through the invitation, which works even
 * when sign-up is off (for the invitation's email when it names one) and joins at once.
 */

const JoinTeamDocument = graphql(`
  mutation JoinTeam($token: String!) {
    joinTeam(token: $token) {
      id
      name
      role
    }
  }
`);

type Invitation = Data<'post', '/invitations/lookup'>;

export function JoinPage() {
  const { user, signedOut } = useSession();
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [invitation, setInvitation] = useState<Invitation | null>(null);
  const [lookupError, setLookupError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [joined, setJoined] = useState<{ name: string; role: string } | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    document.title = `${invitation ? `Join ${invitation.team.name}` : 'Join a team'} · Session Archive`;
  }, [invitation]);
  useEffect(() => {
    if (!token) return;
    let live = true;
    void rest.post('/invitations/lookup', { body: { token } }).then((r) => {
      if (!live) return;
      if (r.ok && r.data) setInvitation(r.data);
      else setLookupError(r.error ?? 'The invitation could not be read');
    });
    return () => {
      live = false;
    };
  }, [token]);

  const join = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await gql(JoinTeamDocument, { token });
      setJoined({ name: r.joinTeam.name, role: r.joinTeam.role.toLowerCase() });
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const signOut = async () => {
    await rest.post('/auth/sign-out');
    signedOut();
  };

  const here = `/join?token=${encodeURIComponent(token)}`;
  let body;
  if (joined) {
    body = (
      <>
        <h1>You joined {joined.name}</h1>
        <p role="status">
          You are now {joined.role === 'admin' ? 'an' : 'a'} {joined.role} of {joined.name}.
        </p>
        <p>
          Its projects are on your <Link to="/">Projects</Link> page; the team and its members are under <Link to="/settings/teams">Teams</Link>.
        </p>
      </>
    );
  } else if (!token || lookupError) {
    body = (
      <>
        <h1>Join a team</h1>
        <p role="alert" className="error">
          {token ? lookupError : 'This link has no invitation token.'} Ask an admin of the team for a new invitation.
        </p>
      </>
    );
  } else if (!invitation || user === undefined) {
    body = <p role="status">Loading the invitation…</p>;
  } else {
    body = (
      <>
        <h1>Join {invitation.team.name}</h1>
        <p>
          You are invited to the team <strong>{invitation.team.name}</strong> as {invitation.role}
          {invitation.email && (
            <>
              {' '}
              (for <strong>{invitation.email}</strong>)
            </>
          )}
          . The link works once, until {new Date(invitation.expiresAt).toLocaleString()}.
        </p>
        {user ? (
          <>
            <p>You are signed in as {user.email}.</p>
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void join();
              }}
            >
              <FormError error={error} />
              <div className="actions">
                <button type="submit" disabled={busy}>
                  Join team
                </button>
                <button type="button" onClick={() => void signOut()}>
                  Use another account
                </button>
              </div>
            </form>
          </>
        ) : (
          <>
            <p>
              Have an account? <Link to={`/sign-in?next=${encodeURIComponent(here)}`}>Sign in to join</Link>
            </p>
            <NewAccountForJoin token={token} email={invitation.email} onJoined={() => setJoined({ name: invitation.team.name, role: invitation.role })} />
          </>
        )}
      </>
    );
  }
  return (
    <main id="main" className="narrow">
      {body}
    </main>
  );
}

/** An account made through the invitation (allowed even with sign-up off): signed in and joined at once. */
function NewAccountForJoin({ token, email, onJoined }: { token: string; email: string | null; onJoined: () => void }) {
  const { refresh } = useSession();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    const r = await rest.post('/auth/sign-up', {
      body: { email: email ?? formText(form, 'email'), name: formText(form, 'name'), password: formText(form, 'password'), invitationToken: token },
    });
    if (r.ok) {
      onJoined();
      await refresh();
    } else {
      setError(r.error ?? 'The account could not be created');
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="join-new-account">
      <h2 id="join-new-account">New here? Create an account</h2>
      <form onSubmit={(e) => void submit(e)}>
        <NewAccountFields email={email} />
        <FormError error={error} />
        <button type="submit" disabled={busy}>
          Create account and join
        </button>
      </form>
    </section>
  );
}
