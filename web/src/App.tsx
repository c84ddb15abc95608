import { lazy, Suspense, useEffect, type ReactNode } from 'react';
import { Link, Navigate, Route, Routes, useLocation } from 'react-router';
import { Layout } from './Layout';
import { AccountPage } from './pages/Account';
import { ExportPage } from './pages/Export';
import { ApiKeysPage } from './pages/ApiKeys';
import { JoinPage } from './pages/Join';
import { CliLoginPage } from './pages/CliLogin';
import { ProjectsPage } from './pages/Projects';
import { ProjectPage } from './pages/ProjectSessions';
import { ResetPasswordPage } from './pages/ResetPassword';
import { SearchPage } from './pages/Search';
import { SessionPage } from './pages/SessionReader';
import { SharesPage } from './pages/Shares';
import { SignInPage } from './pages/SignIn';
import { TeamsPage } from './pages/Teams';
import { UsersPage } from './pages/Users';
import { AuditLogPage } from './pages/AuditLog';
import { WebhooksPage } from './pages/Webhooks';
import { useSession } from './session';

/** The dashboard brings Chart.js: a chunk of its own, fetched (from this origin) when first opened. */
const DashboardPage = lazy(() => import('./pages/Dashboard').then((m) => ({ default: m.DashboardPage })));

/** Routes of the console (docs/console.md). Pages behind sign-in send a signed-out visitor to /sign-in and back. */
export function App() {
  return (
    <Routes>
      <Route path="/sign-in" element={<SignInPage />} />
      <Route path="/reset-password" element={<ResetPasswordPage />} />
      <Route path="/join" element={<JoinPage />} />
      <Route element={<Layout />}>
        <Route
          path="/"
          element={
            <Private title="Projects">
              <ProjectsPage />
            </Private>
          }
        />
        <Route
          path="/projects/:projectId"
          element={
            <Private title="Project">
              <ProjectPage />
            </Private>
          }
        />
        <Route
          path="/projects/:projectId/sessions/:sessionId"
          element={
            <Private title="Session">
              <SessionPage />
            </Private>
          }
        />
        <Route
          path="/search"
          element={
            <Private title="Search">
              <SearchPage />
            </Private>
          }
        />
        <Route
          path="/dashboard"
          element={
            <Private title="Dashboard">
              <Suspense fallback={<p role="status">Loading…</p>}>
                <DashboardPage />
              </Suspense>
            </Private>
          }
        />
        <Route
          path="/settings/api-keys"
          element={
            <Private title="API keys">
              <ApiKeysPage />
            </Private>
          }
        />
        <Route
          path="/settings/teams"
          element={
            <Private title="Teams">
              <TeamsPage />
            </Private>
          }
        />
        <Route
          path="/settings/shares"
          element={
            <Private title="Shared links">
              <SharesPage />
            </Private>
          }
        />
        <Route
          path="/settings/account"
          element={
            <Private title="Account">
              <AccountPage />
            </Private>
          }
        />
        <Route
          path="/settings/export"
          element={
            <Private title="Export">
              <ExportPage />
            </Private>
          }
        />
        <Route
          path="/settings/users"
          element={
            <Private title="Users">
              <UsersPage />
            </Private>
          }
        />
        <Route
          path="/settings/webhooks"
          element={
            <Private title="Webhooks">
              <WebhooksPage />
            </Private>
          }
        />
        <Route
          path="/settings/audit"
          element={
            <Private title="Audit log">
              <AuditLogPage />
            </Private>
          }
        />
        <Route
          path="/cli-login"
          element={
            <Private title="Log in a client">
              <CliLoginPage />
            </Private>
          }
        />
        <Route path="*" element={<NotFound />} />
      </Route>
    </Routes>
  );
}

function Private({ title, children }: { title: string; children: ReactNode }) {
  const { user } = useSession();
  const location = useLocation();
  useEffect(() => {
    document.title = `${title} · Session Archive`;
  }, [title]);
  if (user === undefined) return <p role="status">Loading…</p>;
  if (user === null) return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  return <>{children}</>;
}

/** Any other address (the service answers it with 404 and this page when a browser asks). */
function NotFound() {
  useEffect(() => {
    document.title = 'Page not found · Session Archive';
  }, []);
  return (
    <>
      <h1>Page not found</h1>
      <p>There is nothing at this address.</p>
      <p>
        <Link to="/">Go to your projects</Link>
      </p>
    </>
  );
}
