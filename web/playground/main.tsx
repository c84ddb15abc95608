// The GraphQL playground (docs/graphql.md): GraphiQL 5, bundled by Vite (web/playground/vite.config.mts)
// into dist/playground and served by the API process at GET /api/v1/graphql. No token is needed
// for the page; the user puts `Authorization: Bearer …` into GraphiQL's headers editor.
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

const url = window.location.pathname.replace(/\/+$/, '');
const fetcher = createGraphiQLFetcher({ url });

const DEFAULT_QUERY = `# Set your API key in the Headers tab below, then run:
{
  projects {
    id
    name
    sessionCount
  }
}
`;

createRoot(document.getElementById('graphiql')!).render(
  <StrictMode>
    <GraphiQL
      fetcher={fetcher}
      isHeadersEditorEnabled
      shouldPersistHeaders={false}
      defaultEditorToolsVisibility="headers"
      defaultHeaders={'{\n  "Authorization": "Bearer <your API key>"\n}'}
      defaultQuery={DEFAULT_QUERY}
    />
  </StrictMode>,
);
