import fs from 'node:fs';
import path from 'node:path';
import { Router, type Request } from 'express';

/**
 * The GraphiQL playground, served entirely by this service (no CDN): GraphiQL 3 with React 18
 * UMD builds from node_modules, plus a small boot script. The page and its assets need no token;
 * the user types `Authorization: Bearer …` into GraphiQL's headers editor.
 */
interface Asset {
  type: string;
  body: Buffer;
}

const BOOT_SCRIPT = `(function () {
  var url = window.location.pathname.replace(/\\/+$/, '');
  var fetcher = GraphiQL.createFetcher({ url: url });
  var root = ReactDOM.createRoot(document.getElementById('graphiql'));
  root.render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false,
      defaultEditorToolsVisibility: 'headers',
      defaultHeaders: '{\\n  "Authorization": "Bearer <your API key>"\\n}',
      defaultQuery: '# Set your API key in the Headers tab below, then run:\\n{\\n  projects {\\n    id\\n    name\\n    sessionCount\\n  }\\n}\\n'
    })
  );
})();
`;

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Session Archive GraphQL</title>
    <link rel="stylesheet" href="ASSETS/graphiql.min.css" />
    <style>html, body, #graphiql { height: 100%; margin: 0; }</style>
  </head>
  <body>
    <div id="graphiql">Loading…</div>
    <script src="ASSETS/react.production.min.js"></script>
    <script src="ASSETS/react-dom.production.min.js"></script>
    <script src="ASSETS/graphiql.min.js"></script>
    <script src="ASSETS/playground.js"></script>
  </body>
</html>
`;

function findUp(start: string, rel: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, rel);
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`${rel} not found above ${start}`);
  }
}

function loadAssets(): Map<string, Asset> {
  const nm = (p: string) => fs.readFileSync(findUp(__dirname, path.join('node_modules', p)));
  return new Map<string, Asset>([
    ['graphiql.min.js', { type: 'application/javascript; charset=utf-8', body: nm('graphiql/graphiql.min.js') }],
    ['graphiql.min.css', { type: 'text/css; charset=utf-8', body: nm('graphiql/graphiql.min.css') }],
    ['react.production.min.js', { type: 'application/javascript; charset=utf-8', body: nm('react/umd/react.production.min.js') }],
    ['react-dom.production.min.js', { type: 'application/javascript; charset=utf-8', body: nm('react-dom/umd/react-dom.production.min.js') }],
    ['playground.js', { type: 'application/javascript; charset=utf-8', body: Buffer.from(BOOT_SCRIPT, 'utf8') }],
  ]);
}

/** A browser asking for a page (not a GET operation, which carries ?query=). */
export function wantsPlayground(req: Request): boolean {
  return req.method === 'GET' && req.query.query === undefined && req.accepts(['application/json', 'text/html']) === 'text/html';
}

export function playgroundRouter(): Router {
  const assets = loadAssets();
  const r = Router();
  r.get('/', (req, res, next) => {
    if (!wantsPlayground(req)) return next();
    const base = `${req.baseUrl}/assets`;
    res.status(200).type('text/html; charset=utf-8').setHeader('Cache-Control', 'no-cache');
    res.send(PAGE.replace(/ASSETS/g, base));
  });
  r.get('/assets/:file', (req, res, next) => {
    const a = assets.get(req.params.file);
    if (!a) return next();
    res.status(200).type(a.type).setHeader('Cache-Control', 'public, max-age=3600');
    res.send(a.body);
  });
  return r;
}
