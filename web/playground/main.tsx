// The GraphQL playground (docs/graphql.md): GraphiQL 5, bundled by Vite (web/playground/vite.config.mts)
// into dist/playground and served by the API process at GET /api/v1/graphql. No token is needed
// for the page. Signed in to the console, queries and the schema explorer run as that person: the
// browser sends the session cookie, and every request carries the session's X-CSRF-Token (read from
// GET /api/v1/auth/session), which the service asks of cookie-authenticated POSTs. Otherwise (or to
// act as a key) the user puts `Authorization: Bearer …` into GraphiQL's headers editor; a Bearer
// request needs no CSRF token, so the extra header does no harm.
//
// Monaco's web workers (editor, GraphQL language service, JSON) are separate files of the bundle,
// loaded from this origin (`worker-src 'self'`): see graphiql/setup-workers/vite.
import 'graphiql/setup-workers/vite';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { GraphiQL } from 'graphiql';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import 'graphiql/style.css';
import './playground.css';

interface Signed {
  email: string;
  csrfToken: string;
}

/** The console's browser session, if there is one (a 401 or any failure: none). */
async function consoleSession(): Promise<Signed | null> {
  try {
    const res = await fetch('/api/v1/auth/session', { credentials: 'same-origin', headers: { Accept: 'application/json' } });
    if (!res.ok) return null;
    const body = (await res.json()) as { data?: { user?: { email?: string }; csrfToken?: string } };
    const email = body.data?.user?.email;
    const csrfToken = body.data?.csrfToken;
    return email && csrfToken ? { email, csrfToken } : null;
  } catch {
    return null;
  }
}

const EXAMPLE = `{
  projects {
    id
    name
    sessionCount
  }
}
`;

function render(signed: Signed | null) {
  const url = window.location.pathname.replace(/\/+$/, '');
  // Named, so that schema review can tell the playground's operations from an app's.
  const client = { 'graphql-client-name': 'session-archive-playground' };
  const fetcher = createGraphiQLFetcher({ url, headers: signed ? { ...client, 'X-CSRF-Token': signed.csrfToken } : client });
  const defaultQuery = signed
    ? `# Signed in to the console as ${signed.email.replace(/[\r\n]/g, '')}: queries run as you.\n# To act as an API key instead, set "Authorization": "Bearer <key>" in the Headers tab below.\n${EXAMPLE}`
    : `# Set your API key in the Headers tab below (or sign in to the console at /sign-in), then run:\n${EXAMPLE}`;
  createRoot(document.getElementById('graphiql')!).render(
    <StrictMode>
      <GraphiQL
        fetcher={fetcher}
        isHeadersEditorEnabled
        shouldPersistHeaders={false}
        defaultEditorToolsVisibility={signed ? false : 'headers'}
        defaultHeaders={signed ? '{}' : '{\n  "Authorization": "Bearer <your API key>"\n}'}
        defaultQuery={defaultQuery}
      />
    </StrictMode>,
  );
}

void consoleSession().then(render);
