import { useEffect, useState } from 'react';
import { Link, useParams } from 'react-router';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import type { SessionReaderQuery } from '../gql/graphql';
import { bytes, SessionDetails } from './SessionDetails';
import { SessionShares } from './Shares';
import { Transcript } from './Transcript';
import { errorText, when } from './ui';
import '../reader.css';

/*
 * The session reader: heading = display title, metadata, downloads, rename, tags,
 * delete, a table of contents of the exchanges and the transcript rendered through the sanitiser
 * (../markdown.ts). A 50 MB session is never loaded whole: the transcript is read a page of
 * exchanges at a time (Session.exchanges, at most 1 MiB per page) around the exchange being read,
 * extended as the reader scrolls, trimmed far from it, and each exchange is rendered only when it
 * comes near the viewport. `#exchange-<n>` in the address opens the reader at exchange n.
 */

const ReaderDocument = graphql(`
  query SessionReader($projectId: ID!, $id: ID!) {
    session(id: $id, projectId: $projectId) {
      id
      projectId
      name
      userTitle
      displayTitle
      etag
      createdAt
      updatedAt
      startedAt
      endedAt
      markdownSize
      rawDataSize
      sessionDataSize
      metadata {
        clientName
        clientVersion
        agentName
        deviceId
        gitBranches
        llmModels
        tags
        machineName
        title
        summary
      }
      redactions {
        rule
        count
      }
      project {
        id
        name
        legalHold
        owner {
          __typename
          ... on Team {
            legalHold
          }
        }
      }
      uploadedBy {
        id
        name
      }
      viewerCan {
        rename
        tag
        delete
        share
      }
    }
  }
`);

type Session = NonNullable<SessionReaderQuery['session']>;

export function SessionPage() {
  const { projectId = '', sessionId = '' } = useParams();
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notFound, setNotFound] = useState(false);

  useEffect(() => {
    setSession(null);
    setError(null);
    setNotFound(false);
    gql(ReaderDocument, { projectId, id: sessionId }).then(
      (r) => setSession(r.session),
      (err: unknown) => {
        const code = (err as { code?: string }).code;
        if (code === 'NOT_FOUND' || code === 'FORBIDDEN') setNotFound(true);
        setError(errorText(err));
      },
    );
  }, [projectId, sessionId]);

  useEffect(() => {
    if (session) document.title = `${session.displayTitle} · Session Archive`;
  }, [session]);

  if (notFound) {
    return (
      <>
        <h1>Session not found</h1>
        <p>
          There is no session of yours at this address. <Link to={`/projects/${encodeURIComponent(projectId)}`}>Back to the project</Link>
        </p>
      </>
    );
  }
  if (!session) {
    return error ? (
      <p role="alert" className="error">
        {error}
      </p>
    ) : (
      <p role="status">Loading session…</p>
    );
  }
  return <Reader key={session.id} session={session} onChange={setSession} />;
}

/** One line under the title: when, with what, how much (the rest is in the Details panel). */
const facts = (s: Session) =>
  [
    when(s.startedAt ?? s.createdAt),
    [s.metadata.clientName, s.metadata.agentName].filter(Boolean).join(' · '),
    s.metadata.llmModels.join(', '),
    bytes(s.markdownSize),
  ]
    .filter(Boolean)
    .join(' · ');

function Reader({ session, onChange }: { session: Session; onChange: (s: Session) => void }) {
  const vars = { projectId: session.projectId, id: session.id };
  const title = session.displayTitle;
  return (
    <article className="reader" aria-labelledby="session-title">
      <p className="crumbs">
        <Link to={`/projects/${encodeURIComponent(session.projectId)}`}>{session.project.name}</Link>
      </p>
      <h1 id="session-title">{title}</h1>
      <p className="facts">{facts(session)}</p>
      {/* The transcript comes first: details, tags, downloads and sharing fold into this panel. */}
      <details className="panel">
        <summary>Details, tags and sharing</summary>
        <SessionDetails session={session} onChange={onChange} />
        {session.viewerCan.share && <SessionShares projectId={session.projectId} sessionId={session.id} title={title} />}
      </details>
      <Transcript vars={vars} markdownSize={session.markdownSize} etag={session.etag} />
    </article>
  );
}
