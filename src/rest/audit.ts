import type { Response } from 'express';
import type { auditRoutes } from '../api/routes';
import { exportAudit, listAudit } from '../services/audit-log';
import { ok, type Door } from './context';
import { ctxOf } from '../http/request-context';
import type { Handlers } from '../api/route';

/** Waits until `res` takes more (or has gone away: then false). */
function drained(res: Response): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (more: boolean) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(more);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

/** The audit log (the rules: src/services/audit-log.ts). */
export function auditHandlers({ deps, longReads }: Door): Handlers<typeof auditRoutes> {
  return {
    listAudit: async (req) => ok(await listAudit(ctxOf(req, deps), req.query)),

    // JSON lines, streamed in batches read one statement at a time: no database connection is held
    // while the reader takes them; a long read (counted, an idle reader cut off).
    exportAudit: async (req, res) => {
      longReads.enter(req, res);
      const batches = await exportAudit(ctxOf(req, deps), req.query);
      longReads.cutOffIdle(res);
      res.status(200);
      res.setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
      res.setHeader('Content-Disposition', 'attachment; filename="audit-log.jsonl"');
      res.setHeader('Cache-Control', 'private, no-store');
      try {
        for await (const batch of batches) {
          const text = batch.map((e) => `${JSON.stringify(e)}\n`).join('');
          if (!res.write(text) && !(await drained(res))) return;
        }
        res.end();
      } catch (err) {
        // After the headers an error can only end the response.
        deps.logger.warn({ msg: 'audit export stopped', err: String((err as Error)?.message ?? err) });
        res.destroy();
      }
    },
  };
}
