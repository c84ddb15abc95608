import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import type { ProjectsQuery } from '../gql/graphql';
import { when } from './ui';

/*
 * Console II (search, dashboard; project editing) is not built yet: these pages
 * hold the routes of §10 with a minimal view so navigation and deep links work.
 */

const ProjectsDocument = graphql(`
  query Projects {
    projects {
      id
      name
      sessionCount
      lastActivity
    }
  }
`);

export function ProjectsPage() {
  const [projects, setProjects] = useState<ProjectsQuery['projects'] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    gql(ProjectsDocument).then(
      (r) => setProjects(r.projects),
      (err: unknown) => setError(err instanceof Error ? err.message : String(err)),
    );
  }, []);
  return (
    <>
      <h1>Projects</h1>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {projects === null ? (
        !error && <p role="status">Loading projects…</p>
      ) : projects.length === 0 ? (
        <p>
          No projects yet. Upload sessions with the upload CLI (<Link to="/cli-login">log it in</Link>) or with an{' '}
          <Link to="/settings/api-keys">API key</Link>.
        </p>
      ) : (
        <ul className="plain">
          {projects.map((p) => (
            <li key={p.id}>
              <Link to={`/projects/${encodeURIComponent(p.id)}`}>{p.name}</Link> — {p.sessionCount} sessions, last activity{' '}
              {when(p.lastActivity)}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

export function SearchPage() {
  return (
    <>
      <h1>Search</h1>
      <p>Search is not in the console yet; the GraphQL API offers it (searchSessions).</p>
    </>
  );
}
