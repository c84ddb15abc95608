import path from 'node:path';
import { Router, type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import { AppError, MESSAGES } from '../errors';
import { SITE_ROUTES } from '../http/site-routes';
import { serveBundle } from '../http/static-bundle';
import { openApiDocument } from '../api/openapi';

/**
 * GET /api/v1/openapi.json and GET /api/v1/docs (docs/rest.md), without a token. The reference
 * page is Scalar's standalone bundle, served from node_modules (no CDN: it works offline), booted
 * by a script file of ours (no inline script), under a CSP allowing this origin only.
 *
 * Signed in to the console, "Test Request" runs as that person, as the GraphQL playground does:
 * the boot script reads the browser session (GET /api/v1/auth/session) and gives Scalar a fetch
 * that sends the session cookie and, on anything but GET/HEAD/OPTIONS, the session's
 * X-CSRF-Token. An Authorization header without a token (the Authentication box left empty) is
 * dropped, so the cookie decides; with a key typed there, the request runs as the key.
 */
const scalarDir = () => path.join(path.dirname(require.resolve('@scalar/api-reference')), 'browser');

const BOOT_SCRIPT = `(function () {
  'use strict';
  var SAFE = ['GET', 'HEAD', 'OPTIONS'];
  var config = {
    url: '/api/v1/openapi.json',
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: 'never',
    documentDownloadType: 'json',
    authentication: { preferredSecurityScheme: 'bearer' },
  };
  function start(signed) {
    var csrf = signed ? signed.csrfToken : null;
    config.customFetch = function (input, init) {
      var req = new Request(input, init);
      var headers = new Headers(req.headers);
      var auth = headers.get('authorization');
      if (auth !== null && !/^\\S+\\s+\\S/.test(auth.trim())) headers.delete('authorization');
      if (csrf && !headers.has('authorization') && SAFE.indexOf(req.method) === -1) headers.set('X-CSRF-Token', csrf);
      return fetch(new Request(req, { headers: headers, credentials: 'same-origin' }));
    };
    var note = document.getElementById('signed-in');
    if (signed && note) {
      note.textContent = 'Signed in to the console as ' + signed.email + ': Test Request runs as you, no key needed. To act as an API key instead, enter it under Authentication.';
      note.hidden = false;
    }
    Scalar.createApiReference('#app', config);
  }
  fetch('/api/v1/auth/session', { credentials: 'same-origin', headers: { Accept: 'application/json' } })
    .then(function (res) { return res.ok ? res.json() : null; })
    .then(function (body) {
      var d = body && body.data;
      return d && d.csrfToken && d.user && d.user.email ? { email: String(d.user.email), csrfToken: String(d.csrfToken) } : null;
    })
    .catch(function () { return null; })
    .then(start);
})();
`;

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Session Archive REST API</title>
  </head>
  <body>
    <noscript>The reference needs JavaScript; the document itself is at <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</noscript>
    <p id="signed-in" role="status" hidden style="margin:0;padding:0.5rem 1rem;font:14px/1.4 system-ui,sans-serif;background:#eef6ee;color:#1d3b1d;border-bottom:1px solid #cfe3cf"></p>
    <div id="app"></div>
    <script src="/api/v1/docs/assets/standalone.js"></script>
    <script src="/api/v1/docs/boot.js"></script>
  </body>
</html>
`;

/** Scripts and connections to this origin only; Scalar sets inline styles, and fonts/images may be data: URLs. */
const docsHeaders = helmet({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:', 'blob:'],
      fontSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      workerSrc: ["'self'", 'blob:'],
      objectSrc: ["'none'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'none'"],
    },
  },
  crossOriginResourcePolicy: { policy: 'same-origin' },
  crossOriginEmbedderPolicy: false,
  referrerPolicy: { policy: 'no-referrer' },
});

export function docsRouter(): Router {
  const r = Router();
  r.get(SITE_ROUTES.openApi.path, (_req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.json(openApiDocument());
  });
  r.use(
    serveBundle({
      what: 'REST reference',
      dir: null,
      headers: docsHeaders,
      page: { at: SITE_ROUTES.docsPage.path, html: PAGE },
      scripts: { [SITE_ROUTES.docsScript.path]: BOOT_SCRIPT },
      assets: {
        at: SITE_ROUTES.docsAssets.path,
        from: scalarDir(),
        cacheControl: 'public, max-age=86400',
        unknown: (_req: Request, _res: Response, next: NextFunction) => next(new AppError('NOT_FOUND', MESSAGES.notFound)),
      },
    }),
  );
  return r;
}
