import { NavLink, Outlet, useNavigate } from 'react-router';
import { rest } from './api/rest';
import { useSession } from './session';

/** The frame of signed-in pages: navigation (Projects, Search, API keys, …) and Sign out. */
export function Layout() {
  const { user, signedOut } = useSession();
  const navigate = useNavigate();
  const signOut = async () => {
    await rest.post('/auth/sign-out');
    signedOut();
    void navigate('/sign-in');
  };
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Session Archive</span>
        {user && (
          <nav aria-label="Main">
            <NavLink to="/" end>
              Projects
            </NavLink>
            <NavLink to="/search">Search</NavLink>
            <NavLink to="/dashboard">Dashboard</NavLink>
            <NavLink to="/settings/teams">Teams</NavLink>
            <NavLink to="/settings/api-keys">API keys</NavLink>
            <NavLink to="/settings/shares">Shared links</NavLink>
            <NavLink to="/cli-login">Log in a client</NavLink>
            <NavLink to="/settings/account">Account</NavLink>
            {user.role === 'admin' && <NavLink to="/settings/users">Users</NavLink>}
          </nav>
        )}
        {user && (
          <div className="who">
            <span>{user.email}</span>
            <button type="button" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
        )}
      </header>
      <main id="main">
        <Outlet />
      </main>
    </>
  );
}
