import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { SESSION_LOST, setCsrfToken } from './api/http';
import { rest, type Schema } from './api/rest';

export type User = Schema<'User'>;

interface SessionState {
  /** undefined while loading, null when signed out. */
  user: User | null | undefined;
  /** True while no account exists: the console offers "Create the first account". */
  needsSetup: boolean;
  /** Self sign-up is open (SIGNUP_ENABLED=true on the server). */
  signupEnabled: boolean;
  refresh: () => Promise<void>;
  signedOut: () => void;
}

const SessionContext = createContext<SessionState | null>(null);

/** Network error, server error, or too many requests: worth asking again. */
const transient = (status: number) => status === 0 || status === 429 || status >= 500;
const pause = (attempt: number) => new Promise((r) => setTimeout(r, Math.min(250 * 2 ** attempt, 4000)));

export function SessionProvider({ children }: { children: ReactNode }) {
  const [user, setUser] = useState<User | null | undefined>(undefined);
  const [needsSetup, setNeedsSetup] = useState(false);
  const [signupEnabled, setSignupEnabled] = useState(false);

  const refresh = useCallback(async () => {
    // A service that is briefly unreachable or busy (network error, 5xx, 429) is asked again
    // (backing off, up to about half a minute) rather than taken for "signed out": the wrong page
    // (Sign in instead of Create the first account) would stay up until a reload.
    for (let attempt = 0; ; attempt++) {
      const retry = attempt < 8;
      const r = await rest.get('/auth/session');
      if (r.ok && r.data) {
        setCsrfToken(r.data.csrfToken);
        setNeedsSetup(false);
        setUser(r.data.user);
        return;
      }
      if (retry && transient(r.status)) {
        await pause(attempt);
        continue;
      }
      setCsrfToken(null);
      const setup = await rest.get('/auth/setup');
      if (retry && !setup.ok && transient(setup.status)) {
        await pause(attempt);
        continue;
      }
      setNeedsSetup(Boolean(setup.ok && setup.data?.needsSetup));
      setSignupEnabled(Boolean(setup.ok && setup.data?.signupEnabled));
      setUser(null);
      return;
    }
  }, []);

  useEffect(() => {
    void refresh();
    // A call refused with 401: read the session again (signed out → the sign-in page).
    const lost = () => void refresh();
    window.addEventListener(SESSION_LOST, lost);
    return () => window.removeEventListener(SESSION_LOST, lost);
  }, [refresh]);

  const signedOut = useCallback(() => {
    setCsrfToken(null);
    setUser(null);
  }, []);

  return <SessionContext.Provider value={{ user, needsSetup, signupEnabled, refresh, signedOut }}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}
