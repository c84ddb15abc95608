import type { Request, Response } from 'express';
import type { sessionRoutes } from '../api/routes';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { etagMatches } from '../domain/etag';
import { escapeJsonStringBytes } from '../domain/json-escape';
import { AppError, MESSAGES } from '../errors';
import { onSessionSnapshot, readSessionContent, streamsLong, type SessionContent } from '../services/session-reads';
import { resumableParam, resumableSessionsOfProject, searchResumable } from '../services/resume';
import * as access from '../services/access';
import * as exchanges from '../services/exchanges';
import { presentProjectRef } from '../services/presenters/project';
import { presentSession } from '../services/presenters/session';
import * as sessionLists from '../services/session-lists';
import * as sessionChanges from '../services/session-changes';
import { upsertSession } from '../services/session-upload';
import { usageOfSession } from '../services/usage';
import type { OwnedSession } from '../services/sessions';
import type { ContentPart, SessionRow } from '../domain/session-row';
import { ExchangesQuery, RelatedQuery } from '../services/inputs';
import { parseInput } from '../domain/inputs';
import { relatedSessions } from '../services/related';
import { ok, type Door } from './context';
import { ctxOf } from '../http/request-context';
import type { Handlers } from '../api/route';
import { ENTITLEMENT } from './billing';

/** The upload CLI's session data variant of GET session. */
const SESSION_DATA_MEDIA_TYPE = 'application/vnd.specstory.session-data+json';
const PRODUCIBLE = ['application/json', 'text/markdown', SESSION_DATA_MEDIA_TYPE];

/** Validators every read of one session sends. */
function setValidators(res: Response, row: SessionRow): void {
  res.setHeader('ETag', row.etag);
  res.setHeader('Last-Modified', row.updatedAt.toUTCString());
  res.setHeader('X-Markdown-Size', String(row.markdownSize));
  res.setHeader('X-Raw-Data-Size', String(row.rawDataSize));
  res.setHeader('X-Session-Data-Size', String(row.sessionDataSize));
  res.setHeader('Cache-Control', 'private, no-cache');
  // One URL answers JSON, markdown or session data by Accept, under one ETag: a cache must keep
  // them apart (a browser revalidating the JSON form must not be handed the markdown).
  res.vary('Accept');
}

/** 304 when the client's If-None-Match matches (weak comparison, lists and `*`). */
function notModified(req: Request, res: Response, row: SessionRow): boolean {
  if (!etagMatches(req.get('if-none-match'), row.etag)) return false;
  res.removeHeader('X-Markdown-Size');
  res.removeHeader('X-Raw-Data-Size');
  res.removeHeader('X-Session-Data-Size');
  res.status(304).end();
  return true;
}

/** How much markdown is escaped for a JSON answer in one turn of the event loop. */
const JSON_SLICE_BYTES = 256 * 1024;

type Content = SessionContent;

/**
 * Sends `head`, then the content, then `tail`. Content read whole and small enough to escape at
 * once goes out in one write; otherwise one chunk in memory at a time, waiting for the client to
 * take each (backpressure). An aborted client, or content replaced while the client waited, ends the pipeline.
 */
async function streamContent(res: Response, content: Content, asJsonString?: { head: string; tail: string }): Promise<void> {
  if (Buffer.isBuffer(content)) {
    if (!asJsonString) return void res.end(content);
    if (content.length <= JSON_SLICE_BYTES) {
      return void res.end(
        Buffer.concat([Buffer.from(asJsonString.head + '"', 'utf8'), escapeJsonStringBytes(content), Buffer.from('"' + asJsonString.tail, 'utf8')]),
      );
    }
  }
  const chunks: AsyncIterable<Buffer> = Buffer.isBuffer(content) ? ([content] as unknown as AsyncIterable<Buffer>) : content;
  async function* body(): AsyncGenerator<Buffer> {
    if (!asJsonString) {
      yield* chunks;
      return;
    }
    yield Buffer.from(asJsonString.head + '"', 'utf8');
    for await (const chunk of chunks) {
      // JSON string escaping of the bytes as they are (no decoding, no string of the content), a
      // slice per turn of the event loop, so concurrent readers and other requests take turns.
      for (let at = 0; at < chunk.length; at += JSON_SLICE_BYTES) {
        if (at > 0) await nextTurn();
        yield escapeJsonStringBytes(chunk.subarray(at, at + JSON_SLICE_BYTES));
      }
    }
    yield Buffer.from('"' + asJsonString.tail, 'utf8');
  }
  try {
    await pipeline(Readable.from(body(), { objectMode: false, highWaterMark: 1 }), res);
  } catch (err) {
    // A client that went away is no error of ours; anything else after the headers can only end the response.
    if (!res.headersSent) throw err;
    res.destroy();
  }
}

export function sessionHandlers({ deps, longReads }: Door): Handlers<typeof sessionRoutes> {
  /**
   * A read of one session and one part of its content, all of one version. Content that streams
   * (more than one chunk, not answered 304) is a long read: counted against the user's few, its
   * reader cut off when idle.
   */
  function readSession(req: Request, res: Response, part: ContentPart, fn: (row: OwnedSession, content: Content) => Promise<void>): Promise<void> {
    const { projectId, sessionId } = req.params as Record<string, string>;
    return readSessionContent(
      ctxOf(req, deps),
      projectId,
      sessionId,
      part,
      (row, content) => {
        if (streamsLong(row, part) && !etagMatches(req.get('if-none-match'), row.etag)) {
          longReads.enter(req, res);
          longReads.cutOffIdle(res);
        }
        return fn(row, content);
      },
      () => res.writableNeedDrain,
    );
  }

  return {
    recentSessions: async (req) => ok(await sessionLists.listRecentSessions(ctxOf(req, deps), req.query)),

    listSessions: async (req) => {
      // ?resumable=true: the complete set the CLI expects, no paging.
      if (resumableParam(req.query.resumable)) return ok(await resumableSessionsOfProject(ctxOf(req, deps), req.params.projectId));
      return ok(await sessionLists.listProjectSessions(ctxOf(req, deps), req.params.projectId, req.query));
    },

    sessionSizes: async (req) => ok({ sessions: await sessionLists.projectSessionSizes(ctxOf(req, deps), req.params.projectId) }),

    sessionValidators: async (req, res) => {
      const row = await access.requireReadableSession(ctxOf(req, deps), req.params.projectId, req.params.sessionId);
      setValidators(res, row);
      if (notModified(req, res, row)) return;
      res.setHeader('Content-Length', String(row.markdownSize));
      res.status(200).end();
    },

    readSession: async (req, res) => {
      // No Accept (or */*) → JSON; none of the three types → 406, checked before whether the session exists.
      const wanted = req.accepts(PRODUCIBLE);
      if (!wanted) throw new AppError('NOT_ACCEPTABLE', MESSAGES.notAcceptable);
      await readSession(req, res, wanted === SESSION_DATA_MEDIA_TYPE ? 'session' : 'markdown', async (row, content) => {
        res.vary('Accept');
        if (wanted === SESSION_DATA_MEDIA_TYPE) {
          if (!(row.sessionDataSize > 0)) throw new AppError('NOT_FOUND', MESSAGES.sessionDataNotFound);
          setValidators(res, row);
          if (notModified(req, res, row)) return;
          res.status(200).type(SESSION_DATA_MEDIA_TYPE).setHeader('Content-Length', String(row.sessionDataSize));
          return streamContent(res, content);
        }
        setValidators(res, row);
        if (notModified(req, res, row)) return;
        if (wanted === 'text/markdown') {
          res.status(200).setHeader('Content-Type', 'text/markdown; charset=utf-8');
          res.setHeader('Content-Length', String(row.markdownSize));
          return streamContent(res, content);
        }
        // {"success":true,"data":{"session":{…,"usage":…,"markdownContent":"<streamed>","project":{…}}}}
        const usage = await usageOfSession(ctxOf(req, deps), { projectId: row.projectId, sessionId: row.id });
        const session = JSON.stringify({ ...presentSession(row), usage });
        res.status(200).type('application/json; charset=utf-8');
        return streamContent(res, content, {
          head: `{"success":true,"data":{"session":${session.slice(0, -1)},"markdownContent":`,
          tail: `,"project":${JSON.stringify(presentProjectRef(row.project))}}}}`,
        });
      });
    },

    readRawData: async (req, res) => {
      await readSession(req, res, 'raw', async (row, content) => {
        setValidators(res, row);
        if (notModified(req, res, row)) return;
        res.status(200).type('application/octet-stream').setHeader('Content-Length', String(row.rawDataSize));
        return streamContent(res, content);
      });
    },

    // The paged read by exchange (docs/rest.md, "The paged read of a session"): one snapshot, like every read.
    readExchanges: async (req, res) => {
      const { offset, limit, content } = parseInput(ExchangesQuery, req.query);
      await onSessionSnapshot(ctxOf(req, deps), req.params.projectId, req.params.sessionId, async (row, sctx) => {
        setValidators(res, row);
        if (notModified(req, res, row)) return;
        const page = await exchanges.exchangePage(sctx, row, { offset, limit, content });
        res.json(ok({ projectId: row.projectId, sessionId: row.id, etag: row.etag, markdownSize: row.markdownSize, ...page }));
      });
    },

    relatedSessions: async (req) => {
      const { limit } = parseInput(RelatedQuery, req.query);
      const found = await relatedSessions(ctxOf(req, deps), req.params.projectId, req.params.sessionId, limit);
      return ok({ sessions: found.map(({ session: _, ...r }) => r) });
    },

    uploadSession: async (req, res) => {
      const result = await upsertSession(ctxOf(req, deps), req.params.projectId, req.params.sessionId, req.body, {
        ifMatch: req.get('if-match'),
        ifNoneMatch: req.get('if-none-match'),
      });
      const s = result.session;
      res.setHeader('ETag', s.etag);
      res.status(result.created ? 201 : 200);
      return ok({ sessionId: s.id, projectId: s.projectId, createdAt: s.createdAt.toISOString(), updatedAt: s.updatedAt.toISOString(), etag: s.etag });
    },

    patchSession: async (req, res) => {
      const row = await sessionChanges.patchSession(ctxOf(req, deps), req.params.projectId, req.params.sessionId, req.body);
      res.setHeader('ETag', row.etag);
      return ok({ session: presentSession(row) });
    },

    deleteSession: async (req) => {
      await sessionChanges.deleteSession(ctxOf(req, deps), req.params.projectId, req.params.sessionId);
      return ok({ success: true as const });
    },

    searchResumable: async (req) => ok(await searchResumable(ctxOf(req, deps), req.body)),

    entitlement: () => ok(ENTITLEMENT),
  };
}
