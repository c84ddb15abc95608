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
 */
const scalarDir = () => path.join(path.dirname(require.resolve('@scalar/api-reference')), 'browser');

const BOOT_SCRIPT = `Scalar.createApiReference('#app', {
  url: '/api/v1/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  documentDownloadType: 'json',
  authentication: { preferredSecurityScheme: 'bearer' },
});
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
