import type { NextFunction, Request, Response } from 'express';
import { databaseRefusal } from '../data/errors';
import { AppError, GRAPHQL_CODE, graphqlError, HTTP_STATUS, MESSAGES } from '../errors';
import type { Logger } from '../logger';
import { isGraphqlRequest } from './graphql-path';

function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const refusal = databaseRefusal(err);
  if (refusal) return new AppError('SERVICE_UNAVAILABLE', MESSAGES[refusal]);
  return new AppError('INTERNAL_SERVER_ERROR', MESSAGES.internal);
}

export function sendError(req: Request, res: Response, err: AppError): void {
  const status = HTTP_STATUS[err.code];
  if (err.code === 'SERVICE_UNAVAILABLE') res.setHeader('Retry-After', '1');
  if (req.method === 'HEAD') {
    res.status(status).end();
  } else if (isGraphqlRequest(req)) {
    res.status(status).json({ errors: [graphqlError(GRAPHQL_CODE[err.code], err.message)] });
  } else {
    res.status(status).json({ success: false, error: err.message });
  }
}

/** The last middleware: the documented envelope, never a stack or SQL. */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const appErr = toAppError(err);
    if (res.headersSent) {
      // Already answered (the database watchdog's 503): what it was waiting for failed later.
      logger.warn({ reqId: req.id, msg: 'request failed after its response was sent', err: err instanceof Error ? err.message : String(err) });
      // A response cut short cannot be completed; a complete one leaves its connection alone.
      if (!res.writableEnded) res.destroy();
      return;
    }
    if (appErr.code === 'INTERNAL_SERVER_ERROR' || appErr.code === 'SERVICE_UNAVAILABLE') {
      logger.error(
        { reqId: req.id, err: err instanceof Error ? { message: err.message, stack: err.stack, code: (err as Error & { code?: unknown }).code } : String(err) },
        'request failed',
      );
    }
    sendError(req, res, appErr);
  };
}
