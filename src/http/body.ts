import crypto from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError, invalid, MESSAGES } from '../errors';
import { DeferredJson, inlineOffload, OFFLOAD_MIN_BYTES, type Offload } from '../offload';
import { sendError } from './errors';

const MiB = 1024 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function hasBody(req: Request): boolean {
  const len = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (len !== undefined && len !== '0');
}

/**
 * JSON bodies: gzip or identity (anything else → 415), at most `limit` bytes after inflating
 * (→ 413; body-parser counts inflated bytes as it streams, so a gzip bomb stops at the limit),
 * strictly valid UTF-8 and JSON (→ 400). A body without `Content-Type: application/json` → 400.
 *
 * Bodies from OFFLOAD_MIN_BYTES up are parsed and hashed on a worker thread (contract §16: the
 * event loop stays free); where `defer(req)` says the route prepares the body itself (a session
 * upload: parse, validate, redact and hash in one trip to a thread), `req.body` is left a
 * DeferredJson holding the bytes.
 */
export function jsonBody(limit: number, offload: Offload = inlineOffload, defer: (req: Request) => boolean = () => false) {
  const raw = express.raw({ type: () => true, limit, inflate: true });
  return (req: Request, res: Response, next: NextFunction) => {
    if (!hasBody(req)) {
      req.body = undefined;
      return next();
    }
    if (!req.is('application/json')) return next(invalid('Content-Type must be application/json'));
    // body-parser would also inflate br and deflate; the contract allows only gzip and identity.
    const encoding = String(req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (encoding !== 'gzip' && encoding !== 'identity') {
      return next(new AppError('UNSUPPORTED_MEDIA_TYPE', MESSAGES.unsupportedEncoding));
    }
    // Contract §16: a body must arrive within 60 s plus 1 s per MiB, else the connection goes
    // (408 while an answer is still possible).
    const declared = Number(req.headers['content-length']) || limit;
    const deadline = setTimeout(() => {
      if (!res.headersSent) sendError(req, res, new AppError('REQUEST_TIMEOUT', MESSAGES.requestTimeout));
      else req.socket?.destroy();
    }, 60_000 + Math.ceil(declared / MiB) * 1000);
    deadline.unref();
    raw(req, res, (err?: unknown) => {
      clearTimeout(deadline);
      if (res.headersSent) return;
      if (err) return next(err);
      const buf = req.body as Buffer;
      // Idempotency-Key (http/idempotency.ts) compares requests by their body bytes.
      const wantDigest = req.headers['idempotency-key'] !== undefined;
      if (!Buffer.isBuffer(buf) || buf.length < OFFLOAD_MIN_BYTES) {
        if (wantDigest && Buffer.isBuffer(buf)) req.bodyDigest = crypto.createHash('sha256').update(buf).digest('hex');
        if (!Buffer.isBuffer(buf) || buf.length === 0) {
          req.body = undefined;
          return next();
        }
        try {
          req.body = JSON.parse(utf8.decode(buf));
        } catch {
          return next(invalid(MESSAGES.invalidJson));
        }
        return next();
      }
      const large = defer(req)
        ? (wantDigest ? offload.digest(buf) : Promise.resolve(undefined)).then((digest) => ({ value: new DeferredJson(buf), digest }))
        : offload.parseJson(buf, wantDigest);
      large.then(
        ({ value, digest }) => {
          req.body = value;
          if (digest) req.bodyDigest = digest;
          next();
        },
        (err: unknown) => next(err),
      );
      return;
    });
  };
}
