import { useCallback, useEffect, useRef, useState } from 'react';
import { NavLink, Outlet, useLocation, useNavigate, useOutletContext } from 'react-router';
import { rest, type Schema } from './api/rest';
import { useSession } from './session';

type Team = Schema<'Team'>;

/** What the frame shares with its pages: the signed-in user's teams, read once, and a way to read them again. */
interface Frame {
  /** The teams the user is in (with their role); empty until read. */
  teams: Team[];
  /** Reads them again: a page that made, left or changed a team calls it, so the navigation follows. */
  reloadTeams: () => Promise<void>;
}

/** The frame's shared state, for a page rendered inside it. */
export const useFrame = () => useOutletContext<Frame>();

/**
 * The frame of signed-in pages: the main navigation (Projects, Search, API keys, …) on a line of its
 * own, the two API pages outside the app (the GraphQL playground and the REST reference) beside who
 * is signed in and Sign out. On a narrow screen all of it folds behind a Menu button.
 */
export function Layout() {
  const { user, signedOut } = useSession();
  const navigate = useNavigate();
  const location = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  // The user's teams, read once for every page: the audit log link is for administrators and team
  // admins, and the Webhooks page offers the teams one administers.
  const [teams, setTeams] = useState<Team[]>([]);
  const userId = user?.id;
  // The latest read of them: only its answer is kept (an older one finishing later is stale).
  const latestRead = useRef<{ userId: string } | null>(null);
  const reloadTeams = useCallback(async () => {
    if (!userId) return;
    const read = { userId };
    latestRead.current = read;
    const r = await rest.get('/teams');
    if (latestRead.current === read && r.ok && r.data) setTeams(r.data.teams);
  }, [userId]);
  useEffect(() => {
    setTeams([]);
    // A page opened directly may have asked already (its effects run before the frame's): that
    // read, for this user, serves both.
    if (latestRead.current?.userId !== userId) void reloadTeams();
  }, [reloadTeams, userId]);
  const teamAdmin = teams.some((t) => t.role === 'admin');
  // A link followed from the open menu closes it.
  useEffect(() => setMenuOpen(false), [location.pathname]);
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
      <header className={menuOpen ? 'top open' : 'top'}>
        <span className="brand">Session Archive</span>
        {user && (
          <button type="button" className="menu-button" aria-expanded={menuOpen} aria-controls="main-menu" onClick={() => setMenuOpen(!menuOpen)}>
            Menu
          </button>
        )}
        {user && (
          <div id="main-menu" className="menu">
            <nav aria-label="Main">
              <NavLink to="/" end>
                Projects
              </NavLink>
              <NavLink to="/search">Search</NavLink>
              <NavLink to="/dashboard">Dashboard</NavLink>
              <NavLink to="/settings/teams">Teams</NavLink>
              <NavLink to="/settings/api-keys">API keys</NavLink>
              <NavLink to="/settings/shares">Shared links</NavLink>
              <NavLink to="/settings/webhooks">Webhooks</NavLink>
              <NavLink to="/cli-login">Log in a client</NavLink>
              <NavLink to="/settings/account">Account</NavLink>
              <NavLink to="/settings/export">Export</NavLink>
              {user.role === 'admin' && <NavLink to="/settings/users">Users</NavLink>}
              {(user.role === 'admin' || teamAdmin) && <NavLink to="/settings/audit">Audit log</NavLink>}
            </nav>
            <nav aria-label="API" className="api">
              <a href="/api/v1/graphql">GraphQL playground</a>
              <a href="/api/v1/docs">API reference</a>
            </nav>
            <div className="who">
              <span>{user.email}</span>
              <button type="button" onClick={() => void signOut()}>
                Sign out
              </button>
            </div>
          </div>
        )}
      </header>
      <main id="main">
        <Outlet context={{ teams, reloadTeams } satisfies Frame} />
      </main>
    </>
  );
}
