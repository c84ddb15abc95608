import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { SITE_ROUTES } from '../http/site-routes';

/**
 * The schema, published for frontend teams (docs/graphql.md): GET /api/v1/graphql/schema.graphql
 * is the SDL this service runs (the same text it builds its executable schema from), and
 * GET /api/v1/graphql/changelog.json its changelog (schema.changelog.json, made by `npm run
 * schema:check -- --write-changelog` from the history of schema.graphql and committed beside it).
 * Both are read once at start, carry a strong ETag (the sha256 of the bytes) and answer 304 to a
 * matching If-None-Match. Without a credential unless GRAPHQL_SCHEMA_PUBLIC=false (then `auth`
 * runs first, as for an operation).
 */

interface Published {
  body: Buffer;
  type: string;
  etag: string;
}

const publish = (text: string, type: string): Published => {
  const body = Buffer.from(text, 'utf8');
  return { body, type, etag: `"${createHash('sha256').update(body).digest('hex')}"` };
};

/** If-None-Match holds the entity tag (weak comparison, as for GET: a `W/` prefix still matches), or `*`. */
function notModified(req: Request, etag: string): boolean {
  const header = req.get('if-none-match');
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}

const serve =
  (p: Published): RequestHandler =>
  (req: Request, res: Response) => {
    res.setHeader('ETag', p.etag);
    res.setHeader('Cache-Control', 'no-cache');
    if (notModified(req, p.etag)) {
      res.status(304).end();
      return;
    }
    res.status(200).type(p.type).send(p.body);
  };

/** The changelog beside the schema, or an empty one when the file is missing (a build that did not ship it). */
function changelogText(schemaFile: string): string {
  const file = path.join(path.dirname(schemaFile), 'schema.changelog.json');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '{"entries":[]}\n';
}

export function publishedSchemaRouter(schemaFile: string, sdl: string, auth: RequestHandler | null): Router {
  const schema = publish(sdl, 'text/plain; charset=utf-8');
  const changelog = publish(changelogText(schemaFile), 'application/json; charset=utf-8');
  const before = auth ? [auth] : [];
  const router = Router();
  router.get(SITE_ROUTES.graphqlSchema.path, ...before, serve(schema));
  router.get(SITE_ROUTES.graphqlChangelog.path, ...before, serve(changelog));
  return router;
}
