import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { NextFunction, Request, Response } from 'express';
import { AppError, invalid, MESSAGES } from '../errors';
import { parseJsonBytes } from '../domain/json';
import { DeferredJson, inlineOffload, joined, OFFLOAD_MIN_BYTES, ownedBuffer, type Offload } from '../offload';
import { sendError } from './errors';

const MiB = 1024 * 1024;

function hasBody(req: Request): boolean {
  const len = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (len !== undefined && len !== '0');
}

/** Bytes are gathered into pieces of at most this size. */
const PIECE_BYTES = MiB;

interface Received {
  /** The (inflated) body in order, in buffers of their own (src/offload `ownedBuffer`). */
  pieces: Buffer[];
  length: number;
  /** sha256 (hex) of the inflated body, when asked. */
  digest?: string;
}

/** Reads the rest of a request and throws it away, then calls `done` (once). */
function drain(req: Request, done: () => void): void {
  if (req.complete || req.destroyed) return done();
  let called = false;
  const once = () => {
    if (!called) (called = true), done();
  };
  req.once('end', once);
  req.once('close', once);
  req.resume();
}

/**
 * The body, inflated when gzip, at most `limit` bytes (→ 413 PAYLOAD_TOO_LARGE), copied as it
 * arrives into pieces that can later move to a worker thread: no step joins or copies the whole
 * body on the event loop (contract §16). On an error the rest of the request is read off first,
 * so the answer reaches the client (as body-parser does).
 */
function receive(req: Request, limit: number, gzip: boolean, withDigest: boolean): Promise<Received> {
  return new Promise((resolve, reject) => {
    const declared = gzip || req.headers['content-length'] === undefined ? null : Number(req.headers['content-length']);
    if (declared !== null && declared > limit) return drain(req, () => reject(new AppError('PAYLOAD_TOO_LARGE', MESSAGES.tooLarge)));
    const gunzip = gzip ? zlib.createGunzip() : null;
    const stream: Readable = gunzip ? req.pipe(gunzip) : req;
    const hash = withDigest ? crypto.createHash('sha256') : null;
    const pieces: Buffer[] = [];
    let piece: Buffer | null = null;
    let used = 0;
    let length = 0;
    let settled = false;
    const cleanup = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      req.off('close', onClose);
    };
    const fail = (err: AppError) => {
      if (settled) return;
      settled = true;
      cleanup();
      if (gunzip) {
        req.unpipe(gunzip);
        gunzip.on('error', () => {});
        gunzip.destroy();
      }
      drain(req, () => reject(err));
    };
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) return fail(new AppError('PAYLOAD_TOO_LARGE', MESSAGES.tooLarge));
      hash?.update(chunk);
      for (let off = 0; off < chunk.length; ) {
        if (!piece || used === piece.length) {
          if (piece) pieces.push(piece);
          // Exact when the length is declared; else growing with what came so far.
          const seen = length - chunk.length + off;
          const size = declared !== null ? declared - seen : Math.max(16 * 1024, seen);
          piece = ownedBuffer(Math.max(1, Math.min(PIECE_BYTES, size)));
          used = 0;
        }
        const n = chunk.copy(piece, used, off);
        used += n;
        off += n;
      }
    };
    const onEnd = () => {
      if (settled) return;
      if (declared !== null && length !== declared) return fail(invalid(MESSAGES.invalidJson));
      settled = true;
      cleanup();
      if (piece && used) pieces.push(used === piece.length ? piece : piece.subarray(0, used));
      if (gunzip) {
        req.unpipe(gunzip);
        gunzip.on('error', () => {});
        gunzip.destroy();
        // Whatever follows the gzip stream is read off, so the request can finish.
        req.resume();
      }
      resolve({ pieces, length, digest: hash?.digest('hex') });
    };
    // A body that claims gzip but is not, or a stream that broke off.
    const onError = () => fail(invalid(MESSAGES.invalidJson));
    const onClose = () => {
      if (!req.complete) fail(invalid(MESSAGES.invalidJson));
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * JSON bodies: gzip or identity (anything else → 415), at most `limit` bytes after inflating
 * (→ 413; counted as the body streams, so a gzip bomb stops at the limit), strictly valid UTF-8
 * and JSON (→ 400). A body without `Content-Type: application/json` → 400.
 *
 * Bodies from OFFLOAD_MIN_BYTES up are parsed on a worker thread (contract §16: the event loop
 * stays free); where `defer(req)` says the route prepares the body itself (a session upload:
 * parse, validate, redact and hash in one trip to a thread), `req.body` is left a DeferredJson
 * holding the bytes. With an Idempotency-Key, `req.bodyDigest` is the sha256 of the body.
 */
export function jsonBody(limit: number, offload: Offload = inlineOffload, defer: (req: Request) => boolean = () => false) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!hasBody(req)) {
      req.body = undefined;
      return next();
    }
    if (!req.is('application/json')) return next(invalid('Content-Type must be application/json'));
    // The contract allows only gzip and identity.
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
    receive(req, limit, encoding === 'gzip', req.headers['idempotency-key'] !== undefined).then(
      ({ pieces, length, digest }) => {
        clearTimeout(deadline);
        if (res.headersSent) return;
        // Idempotency-Key (http/idempotency.ts) compares requests by their body bytes.
        if (digest) req.bodyDigest = digest;
        if (length === 0) {
          req.body = undefined;
          return next();
        }
        if (length < OFFLOAD_MIN_BYTES) {
          try {
            req.body = parseJsonBytes(joined(pieces));
          } catch (err) {
            return next(err);
          }
          return next();
        }
        if (defer(req)) {
          req.body = new DeferredJson(pieces);
          return next();
        }
        offload.parseJson(pieces).then(
          (value) => {
            req.body = value;
            next();
          },
          (err: unknown) => next(err),
        );
      },
      (err: unknown) => {
        clearTimeout(deadline);
        if (!res.headersSent) next(err);
      },
    );
  };
}
