import { Router, type Request, type Response } from 'express';
import { AppError, MESSAGES } from '../errors';
import type { Deps } from '../services/context';
import { resumableParam, resumableSessionsOfProject } from '../services/resume';
import * as sessions from '../services/sessions';
import type { SessionRow } from '../services/sessions';
import { ctxOf, ok } from './context';

/** The upload CLI's session data variant of GET session (contract §15). */
export const SESSION_DATA_MEDIA_TYPE = 'application/vnd.specstory.session-data+json';
const PRODUCIBLE = ['application/json', 'text/markdown', SESSION_DATA_MEDIA_TYPE];

/** Validators every read of one session sends. */
function setValidators(res: Response, row: SessionRow): void {
  res.setHeader('ETag', row.etag);
  res.setHeader('Last-Modified', row.updatedAt.toUTCString());
  res.setHeader('X-Markdown-Size', String(row.markdownSize));
  res.setHeader('X-Raw-Data-Size', String(row.rawDataSize));
  res.setHeader('X-Session-Data-Size', String(Number(row.sessionDataSize ?? 0)));
  res.setHeader('Cache-Control', 'private, no-cache');
}

/** 304 when the client's If-None-Match matches (weak comparison, lists and `*`). */
function notModified(req: Request, res: Response, row: SessionRow): boolean {
  if (!sessions.etagMatches(req.get('if-none-match'), row.etag)) return false;
  res.removeHeader('X-Markdown-Size');
  res.removeHeader('X-Raw-Data-Size');
  res.removeHeader('X-Session-Data-Size');
  res.status(304).end();
  return true;
}

export function sessionsRouter(deps: Deps): Router {
  const r = Router();
  const base = '/projects/:projectId/sessions';

  r.get('/sessions/recent', async (req, res) => {
    res.json(ok(await sessions.listRecentSessions(ctxOf(req, deps), req.query)));
  });

  r.get(base, async (req, res) => {
    // ?resumable=true (contract §15): the complete set the CLI expects, no paging.
    if (resumableParam(req.query.resumable)) {
      res.json(ok(await resumableSessionsOfProject(ctxOf(req, deps), req.params.projectId)));
      return;
    }
    res.json(ok(await sessions.listProjectSessions(ctxOf(req, deps), req.params.projectId, req.query)));
  });

  r.get(`${base}/sizes`, async (req, res) => {
    res.json(ok({ sessions: await sessions.projectSessionSizes(ctxOf(req, deps), req.params.projectId) }));
  });

  r.head(`${base}/:sessionId`, async (req, res) => {
    const row = await sessions.requireSession(ctxOf(req, deps), req.params.projectId, req.params.sessionId);
    setValidators(res, row);
    if (notModified(req, res, row)) return;
    res.setHeader('Content-Length', String(row.markdownSize));
    res.status(200).end();
  });

  r.get(`${base}/:sessionId`, async (req, res) => {
    const ctx = ctxOf(req, deps);
    // No Accept (or */*) → JSON; none of the three types → 406, before existence (contract §4 order).
    const wanted = req.accepts(PRODUCIBLE);
    if (!wanted) throw new AppError('NOT_ACCEPTABLE', MESSAGES.notAcceptable);
    const row = await sessions.requireSession(ctx, req.params.projectId, req.params.sessionId);
    res.vary('Accept');
    if (wanted === SESSION_DATA_MEDIA_TYPE) {
      if (!(Number(row.sessionDataSize) > 0)) throw new AppError('NOT_FOUND', MESSAGES.sessionDataNotFound);
      setValidators(res, row);
      if (notModified(req, res, row)) return;
      const data = await sessions.getSessionContent(ctx, row, 'session');
      res.status(200).type(SESSION_DATA_MEDIA_TYPE).send(data);
      return;
    }
    setValidators(res, row);
    if (notModified(req, res, row)) return;
    const wantsMarkdown = wanted === 'text/markdown';
    const markdown = await sessions.getSessionContent(ctx, row, 'markdown');
    if (wantsMarkdown) {
      res.status(200).type('text/markdown; charset=utf-8').send(markdown);
      return;
    }
    res.json(ok({ session: { ...sessions.toSession(row), markdownContent: markdown.toString('utf8'), project: row.project } }));
  });

  r.get(`${base}/:sessionId/raw`, async (req, res) => {
    const ctx = ctxOf(req, deps);
    const row = await sessions.requireSession(ctx, req.params.projectId, req.params.sessionId);
    setValidators(res, row);
    if (notModified(req, res, row)) return;
    const raw = await sessions.getSessionContent(ctx, row, 'raw');
    res.status(200).type('application/octet-stream').send(raw);
  });

  r.put(`${base}/:sessionId`, async (req, res) => {
    const result = await sessions.upsertSession(ctxOf(req, deps), req.params.projectId, req.params.sessionId, req.body, {
      ifMatch: req.get('if-match'),
      ifNoneMatch: req.get('if-none-match'),
    });
    const s = result.session;
    res.setHeader('ETag', s.etag);
    res.status(result.created ? 201 : 200).json(
      ok({ sessionId: s.id, projectId: s.projectId, createdAt: s.createdAt.toISOString(), updatedAt: s.updatedAt.toISOString(), etag: s.etag }),
    );
  });

  r.patch(`${base}/:sessionId`, async (req, res) => {
    const row = await sessions.patchSession(ctxOf(req, deps), req.params.projectId, req.params.sessionId, req.body);
    res.setHeader('ETag', row.etag);
    res.json(ok({ session: sessions.toSession(row) }));
  });

  r.delete(`${base}/:sessionId`, async (req, res) => {
    await sessions.deleteSession(ctxOf(req, deps), req.params.projectId, req.params.sessionId);
    res.json(ok({ success: true }));
  });

  return r;
}
