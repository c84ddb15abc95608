import { useCallback, useEffect, useMemo, useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { gql } from '../api/graphql';
import { useSessionChanges } from '../api/live';
import { graphql } from '../gql';
import type { ProjectSessionsQuery } from '../gql/graphql';
import { filtersFromParams, FilterForm, hasFilters, orderFromParams, readerHref, size } from './filters';
import { errorText, when } from './ui';

/*
 * A project's sessions, newest change first, with cursor paging ("Show more"). Each row shows the
 * display title, who uploaded it (a team project holds every teammate's sessions), sizes, whether
 * the upload CLI can resume it on another machine (the session carries `sessionData`) and how many
 * secrets were redacted from it (counts per rule, never a value). The filters and orders live in
 * the URL (filters.tsx), so a filtered list can be shared and survives a reload.
 */
const ProjectSessionsDocument = graphql(`
  query ProjectSessions($projectId: ID!, $filters: SessionFilters!, $orderBy: SessionOrder!, $after: String) {
    project(id: $projectId) {
      id
      name
    }
    sessionsConnection(filters: $filters, orderBy: $orderBy, first: 50, after: $after) {
      edges {
        node {
          id
          name
          userTitle
          displayTitle
          updatedAt
          createdAt
          startedAt
          markdownSize
          sessionDataSize
          metadata {
            title
            llmModels
            tags
          }
          redactions {
            rule
            count
          }
          uploadedBy {
            id
            name
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

export function ProjectPage() {
  const { projectId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const key = params.toString();
  const filters = useMemo(() => filtersFromParams(new URLSearchParams(key), projectId), [key, projectId]);
  const orderBy = useMemo(() => orderFromParams(new URLSearchParams(key)), [key]);
  const [name, setName] = useState<string | null>(null);
  const [rows, setRows] = useState<Row[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(
    (after: string | null, live: () => boolean = () => true) =>
      gql(ProjectSessionsDocument, { projectId, filters, orderBy, after }).then(
        (r) => {
          if (!live()) return;
          setName(r.project?.name ?? projectId);
          const page = r.sessionsConnection.edges.map((e) => e.node);
          setRows((old) => (after && old ? [...old, ...page] : page));
          setNext(r.sessionsConnection.pageInfo.hasNextPage ? (r.sessionsConnection.pageInfo.endCursor ?? null) : null);
        },
        (err: unknown) => live() && setError(errorText(err)),
      ),
    [projectId, filters, orderBy],
  );
  useEffect(() => {
    let current = true;
    setRows(null);
    setError(null);
    void load(null, () => current);
    return () => {
      current = false;
    };
  }, [load]);
  // Live: the first page is read again when this project's sessions change; pages loaded further
  // down stay, less what the fresh page already holds and what was deleted.
  useSessionChanges(projectId, (changes) => {
    const deleted = new Set(changes.filter((c) => c.kind === 'DELETED').map((c) => c.sessionId));
    gql(ProjectSessionsDocument, { projectId, filters, orderBy, after: null }).then(
      (r) => {
        const page = r.sessionsConnection.edges.map((e) => e.node);
        const fresh = new Set(page.map((s) => s.id));
        setRows((old) => [...page, ...(old ?? []).slice(page.length).filter((s) => !fresh.has(s.id) && !deleted.has(s.id))]);
      },
      () => undefined,
    );
  });

  return (
    <>
      <h1>{name ?? projectId}</h1>
      <FilterForm params={params} onChange={(next) => setParams(next, { replace: true })} projectId={projectId} withOrder />
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {rows === null ? (
        !error && <p role="status">Loading sessions…</p>
      ) : rows.length === 0 ? (
        <p role="status">{hasFilters(params) ? 'No sessions match these filters.' : 'No sessions in this project yet.'}</p>
      ) : (
        <table className="stack">
          <caption>Sessions</caption>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Updated</th>
              <th scope="col">Uploaded by</th>
              <th scope="col">Models</th>
              <th scope="col">Tags</th>
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
                    <Link to={readerHref(projectId, s.id)}>{s.displayTitle}</Link>
                  </td>
                  <td data-label="Updated">{when(s.updatedAt)}</td>
                  <td data-label="Uploaded by">{s.uploadedBy ? s.uploadedBy.name : <span className="muted">—</span>}</td>
                  <td data-label="Models">{s.metadata.llmModels.join(', ') || <span className="muted">—</span>}</td>
                  <td data-label="Tags">
                    {s.metadata.tags.length ? (
                      <ul className="tags">
                        {s.metadata.tags.map((t) => (
                          <li key={t} className="tag">
                            {t}
                          </li>
                        ))}
                      </ul>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                  <td data-label="Size">{size(s.markdownSize)}</td>
                  <td data-label="Resume">{s.sessionDataSize > 0 ? <span className="badge">Resumable</span> : <span className="muted">—</span>}</td>
                  <td data-label="Secrets">
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
