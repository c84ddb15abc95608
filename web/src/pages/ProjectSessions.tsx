import { useCallback, useEffect, useState } from 'react';
import { Link, useParams } from 'react-router';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import type { ProjectSessionsQuery } from '../gql/graphql';
import { when } from './ui';

/*
 * A project's sessions, newest change first, with cursor paging ("Show more"). Each row shows the
 * display title, sizes, whether the upload CLI can resume it on another machine (the session
 * carries `sessionData`, contract §15) and how many secrets were redacted from it (§14: counts
 * per rule, never a value). Filters and orders of §6 belong to console II.
 */
const ProjectSessionsDocument = graphql(`
  query ProjectSessions($projectId: ID!, $after: String) {
    project(id: $projectId) {
      id
      name
    }
    sessionsConnection(filters: { projectId: $projectId }, orderBy: UPDATED_AT_DESC, first: 50, after: $after) {
      edges {
        node {
          id
          name
          userTitle
          updatedAt
          markdownSize
          sessionDataSize
          metadata {
            title
          }
          redactions {
            rule
            count
          }
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

type Row = ProjectSessionsQuery['sessionsConnection']['edges'][number]['node'];

export const displayTitle = (s: Pick<Row, 'userTitle' | 'name' | 'metadata'>): string =>
  s.userTitle || s.metadata.title || s.name;

const kib = (bytes: number) => (bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1048576).toFixed(1)} MiB`);

export function ProjectPage() {
  const { projectId = '' } = useParams();
  const [name, setName] = useState<string | null>(null);
  const [rows, setRows] = useState<Row[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(
    (after: string | null) =>
      gql(ProjectSessionsDocument, { projectId, after }).then(
        (r) => {
          setName(r.project?.name ?? projectId);
          const page = r.sessionsConnection.edges.map((e) => e.node);
          setRows((old) => (after && old ? [...old, ...page] : page));
          setNext(r.sessionsConnection.pageInfo.hasNextPage ? (r.sessionsConnection.pageInfo.endCursor ?? null) : null);
        },
        (err: unknown) => setError(err instanceof Error ? err.message : String(err)),
      ),
    [projectId],
  );
  useEffect(() => {
    setRows(null);
    setError(null);
    void load(null);
  }, [load]);

  return (
    <>
      <h1>{name ?? projectId}</h1>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {rows === null ? (
        !error && <p role="status">Loading sessions…</p>
      ) : rows.length === 0 ? (
        <p>No sessions in this project yet.</p>
      ) : (
        <table>
          <caption>Sessions</caption>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Updated</th>
              <th scope="col">Size</th>
              <th scope="col">Resume</th>
              <th scope="col">Secrets</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((s) => {
              const redacted = s.redactions.reduce((n, r) => n + r.count, 0);
              return (
                <tr key={s.id}>
                  <td>
                    <Link to={`/projects/${encodeURIComponent(projectId)}/sessions/${encodeURIComponent(s.id)}`}>{displayTitle(s)}</Link>
                  </td>
                  <td>{when(s.updatedAt)}</td>
                  <td>{kib(s.markdownSize)}</td>
                  <td>{s.sessionDataSize > 0 ? <span className="badge">Resumable</span> : <span className="muted">—</span>}</td>
                  <td>
                    {redacted > 0 ? (
                      <span className="badge warn" title={s.redactions.map((r) => `${r.rule}: ${r.count}`).join(', ')}>
                        {redacted === 1 ? '1 secret redacted' : `${redacted} secrets redacted`}
                      </span>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {next && (
        <button type="button" onClick={() => void load(next)}>
          Show more
        </button>
      )}
    </>
  );
}
