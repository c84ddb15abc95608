import type { archiveRoutes } from '../api/routes';
import { openExport } from '../services/exports';
import { importArchive } from '../services/imports';
import { parseOnConflict } from '../services/import-session';
import { AppError, invalid, MESSAGES } from '../errors';
import { type Door } from './context';
import { ctxOf } from '../http/request-context';
import type { Handlers } from '../api/route';

/** `?projectId=a&projectId=b` (the simple query parser gives a string or an array). */
function listParam(v: unknown): string[] | undefined {
  if (v === undefined) return undefined;
  return (Array.isArray(v) ? v : [v]).map(String);
}

/** `?teamId=` once (a team id is a single value). */
function teamParam(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw invalid('teamId must be given once');
  return v;
}

export function archiveHandlers({ deps, longReads }: Door): Handlers<typeof archiveRoutes> {
  return {
    // The archive of everything the caller owns and the projects of the teams they administer (or
    // the named projects, or one team's), streamed: a long read (one of the user's few; a reader
    // idle too long is cut off). A client that stops reading pauses it, holding no database
    // connection; one that goes away ends it.
    exportArchive: async (req, res) => {
      longReads.enter(req, res);
      const exp = await openExport(ctxOf(req, deps), { projectIds: listParam(req.query.projectId), teamId: teamParam(req.query.teamId) });
      try {
        longReads.cutOffIdle(res);
        res.status(200);
        res.setHeader('Content-Type', 'application/x-tar');
        res.setHeader('Content-Disposition', 'attachment; filename="session-archive-export.tar"');
        res.setHeader('Content-Length', String(exp.size));
        res.setHeader('Cache-Control', 'private, no-store');
        await exp.writeTo(res).catch((err) => {
          // After the headers an error can only end the response (a client that left is none of ours).
          if (!res.headersSent) throw err;
          if (!res.destroyed) deps.logger.warn({ msg: 'export stopped', err: String((err as Error)?.message ?? err) });
          res.destroy();
        });
      } finally {
        await exp.close();
      }
    },

    // The tar is the body, read as it arrives (the JSON body parser is not on this route); it has its
    // own limit, MAX_IMPORT_BYTES: a declared length over it is refused before a byte is read.
    importArchive: async (req) => {
      const onConflict = parseOnConflict(req.query.onConflict);
      const teamId = teamParam(req.query.teamId);
      const maxBytes = deps.config.maxImportBytes;
      const declared = req.headers['content-length'];
      if (declared !== undefined && Number(declared) > maxBytes) {
        throw new AppError('PAYLOAD_TOO_LARGE', `Archive too large: more than MAX_IMPORT_BYTES (${maxBytes} bytes)`);
      }
      const encoding = String(req.headers['content-encoding'] ?? 'identity')
        .trim()
        .toLowerCase();
      if (encoding !== 'identity') throw new AppError('UNSUPPORTED_MEDIA_TYPE', MESSAGES.unsupportedEncoding);
      const { success, ...data } = await importArchive(ctxOf(req, deps), req, {
        onConflict,
        teamId,
        maxBytes,
        maxFileBytes: deps.config.maxBodyBytes,
        gate: req.bodyGate,
      });
      // 200 either way: what was written stays written; `success` says whether it was everything.
      return { success, data };
    },
  };
}
