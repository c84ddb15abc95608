import { createClient, type Client } from 'graphql-sse';
import { useEffect, useRef } from 'react';
import { graphql } from '../gql';
import type { ConsoleSessionsChangedSubscription } from '../gql/graphql';
import { getCsrfToken } from './http';

/*
 * Live lists: the console hears of session changes through the service's subscription stream
 * (`Subscription.sessionsChanged`, Server-Sent Events at /api/v1/graphql/stream, the graphql-sse
 * client). A list reloads what it shows when a change comes, a few at a time.
 */

const SessionsChangedDocument = graphql(`
  subscription ConsoleSessionsChanged($projectId: ID) {
    sessionsChanged(projectId: $projectId) {
      kind
      projectId
      sessionId
    }
  }
`);

export type SessionChange = ConsoleSessionsChangedSubscription['sessionsChanged'];

/** Changes that come within this long of each other are handled together. */
const SETTLE_MS = 300;

let client: Client | null = null;

/**
 * The one client of this page. The document goes by its id (a trusted document, as every console
 * operation does): the graphql-sse client sends the text, so the body is rewritten on its way out.
 */
function liveClient(): Client {
  client ??= createClient({
    url: '/api/v1/graphql/stream',
    credentials: 'same-origin',
    headers: (): Record<string, string> => {
      const csrf = getCsrfToken();
      return { 'graphql-client-name': 'session-archive-console', ...(csrf ? { 'X-CSRF-Token': csrf } : {}) };
    },
    fetchFn: (input: RequestInfo | URL, init?: RequestInit) => {
      const documentId = (SessionsChangedDocument.__meta__ as { hash?: unknown } | undefined)?.hash;
      if (typeof documentId === 'string' && typeof init?.body === 'string') {
        const { query: _text, ...rest } = JSON.parse(init.body) as Record<string, unknown>;
        init = { ...init, body: JSON.stringify({ ...rest, documentId }) };
      }
      return fetch(input, init);
    },
  });
  return client;
}

/**
 * Calls `onChanges` with the changes heard (to the caller's sessions, or one project's with
 * `projectId`) while the component is mounted. A stream that fails is opened again by the client.
 */
export function useSessionChanges(projectId: string | null, onChanges: (changes: SessionChange[]) => void): void {
  const handler = useRef(onChanges);
  handler.current = onChanges;
  useEffect(() => {
    let pending: SessionChange[] = [];
    let timer: ReturnType<typeof setTimeout> | null = null;
    const stop = liveClient().subscribe<ConsoleSessionsChangedSubscription>(
      { query: SessionsChangedDocument.toString(), variables: { projectId } },
      {
        next: (result) => {
          if (!result.data) return;
          pending.push(result.data.sessionsChanged);
          timer ??= setTimeout(() => {
            timer = null;
            const changes = pending;
            pending = [];
            handler.current(changes);
          }, SETTLE_MS);
        },
        // A refused stream (signed out, the stream cap) leaves the list as it is: it still works by hand.
        error: () => undefined,
        complete: () => undefined,
      },
    );
    return () => {
      stop();
      if (timer) clearTimeout(timer);
    };
  }, [projectId]);
}
