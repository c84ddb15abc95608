import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { NextFunction, Request, Response } from 'express';
import { AppError, invalid, MESSAGES } from '../errors';
import { parseJsonBytes } from '../domain/json';
import { DeferredJson, inlineOffload, joined, OFFLOAD_MIN_BYTES, ownedBuffer, type Offload } from '../offload';
import type { BodyGate } from '../domain/body-gate';

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
    if (!called) {
      called = true;
      done();
    }
  };
  req.once('end', once);
  req.once('close', once);
  req.resume();
}

interface Receiving {
  done: Promise<Received>;
  /** Body bytes as they came off the wire (before inflating), so far. */
  wireBytes(): number;
  /** Stops reading at once (no draining: the client is too slow for that), frees what was kept. */
  abort(err: AppError): void;
}

/**
 * The body, inflated when gzip, at most `limit` bytes (→ 413 PAYLOAD_TOO_LARGE), copied as it
 * arrives into pieces that can later move to a worker thread: no step joins or copies the whole
 * body on the event loop. On an error the rest of the request is read off first,
 * so the answer reaches the client (as body-parser does). With a gate (admission control), each
 * chunk kept is counted and reading pauses while the gate says so.
 */
function receive(req: Request, limit: number, gzip: boolean, withDigest: boolean, gate?: BodyGate): Receiving {
  let wire = 0;
  const onWire = (chunk: Buffer) => {
    wire += chunk.length;
  };
  // Counted until the request has been read off, draining included (the rate check sees it).
  req.on('data', onWire);
  const stopCounting = () => req.off('data', onWire);
  // An error waiting for the rest of the body to be read off (the answer then reaches the client).
  let draining: AppError | null = null;
  let abort: (err: AppError) => void = () => {};
  const done = new Promise<Received>((resolve, reject) => {
    const drainThen = (err: AppError) => {
      draining = err;
      drain(req, () => {
        stopCounting();
        reject(err);
      });
    };
    // A client too slow to be drained gets its answer now (the connection then closes).
    abort = (err) => {
      stopCounting();
      reject(draining ?? err);
    };
    const declared = gzip || req.headers['content-length'] === undefined ? null : Number(req.headers['content-length']);
    if (declared !== null && declared > limit) return drainThen(new AppError('PAYLOAD_TOO_LARGE', MESSAGES.tooLarge));
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
    const fail = (err: AppError, drainFirst = true) => {
      if (settled) return;
      settled = true;
      cleanup();
      // What was kept goes now, not when the rest has been read off.
      pieces.length = 0;
      piece = null;
      if (gunzip) {
        req.unpipe(gunzip);
        gunzip.on('error', () => {});
        gunzip.destroy();
      }
      if (drainFirst) drainThen(err);
      else abort(err);
    };
    const stop = abort;
    abort = (err) => {
      if (settled) stop(err);
      else fail(err, false);
    };
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) return fail(new AppError('PAYLOAD_TOO_LARGE', MESSAGES.tooLarge));
      hash?.update(chunk);
      for (let off = 0; off < chunk.length;) {
        if (!piece || used === piece.length) {
          if (piece) pieces.push(piece);
          // Growing with what came so far (a client that declares 16 MiB and sends a byte gets
          // no 1 MiB buffer), never past the declared length.
          const seen = length - chunk.length + off;
          const grow = Math.max(16 * 1024, seen);
          const size = declared !== null ? Math.min(declared - seen, grow) : grow;
          piece = ownedBuffer(Math.max(1, Math.min(PIECE_BYTES, size)));
          used = 0;
        }
        const n = chunk.copy(piece, used, off);
        used += n;
        off += n;
      }
      // Admission counts what is kept; over the room it gives, reading waits (TCP pushes back).
      if (gate && !gate.take(chunk.length)) {
        stream.pause();
        gate.onResume(() => {
          if (!settled) stream.resume();
        });
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
      stopCounting();
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
  return { done, wireBytes: () => wire, abort: (err) => abort(err) };
}

/** A body slower than this, on average, once its grace period has passed, is cut off. */
interface SlowBodyLimits {
  minBytesPerSecond: number;
  graceMs: number;
}

interface JsonBodyOptions {
  /** Largest body after inflating (→ 413). */
  limit: number;
  slow: SlowBodyLimits;
  offload?: Offload;
  /** Routes that prepare the body themselves (a session upload): req.body is left a DeferredJson. */
  defer?: (req: Request) => boolean;
}

/** How often a body in progress is checked against its deadline and the minimum rate. */
const CHECK_EVERY_MS = 500;

/**
 * JSON bodies: gzip or identity (anything else → 415), at most `limit` bytes after inflating
 * (→ 413; counted as the body streams, so a gzip bomb stops at the limit), strictly valid UTF-8
 * and JSON (→ 400). A body without `Content-Type: application/json` → 400.
 *
 * Bodies from OFFLOAD_MIN_BYTES up are parsed on a worker thread (the event loop stays free);
 * where `defer(req)` says the route prepares the body itself (a session upload: parse, validate,
 * redact and hash in one trip to a thread), `req.body` is left a DeferredJson holding the bytes.
 * With an Idempotency-Key, `req.bodyDigest` is the sha256 of the body.
 *
 * Slow clients: a body must arrive within 60 s plus 1 s per MiB declared, and once it has been
 * arriving for `slow.graceMs` it must average at least `slow.minBytesPerSecond` (bytes on the
 * wire); else reading stops, what was kept is dropped and the answer is 408 `Request timeout`
 * with the connection closed (closeUnreadBodies). Time during which admission control held the
 * reading back (http/admission.ts) is the server's, not the client's: it counts for neither.
 */
export function jsonBody(options: JsonBodyOptions) {
  const { limit, slow, offload = inlineOffload, defer = () => false } = options;
  return (req: Request, res: Response, next: NextFunction) => {
    if (!hasBody(req)) {
      req.body = undefined;
      return next();
    }
    if (!req.is('application/json')) return next(invalid('Content-Type must be application/json'));
    // Only gzip and identity are accepted (docs/rest.md).
    const encoding = String(req.headers['content-encoding'] ?? 'identity')
      .trim()
      .toLowerCase();
    if (encoding !== 'gzip' && encoding !== 'identity') {
      return next(new AppError('UNSUPPORTED_MEDIA_TYPE', MESSAGES.unsupportedEncoding));
    }
    const gate = req.bodyGate;
    const receiving = receive(req, limit, encoding === 'gzip', req.headers['idempotency-key'] !== undefined, gate);
    const declared = Number(req.headers['content-length']) || limit;
    const deadlineMs = 60_000 + Math.ceil(declared / MiB) * 1000;
    const started = Date.now();
    const watch = setInterval(() => {
      const active = Date.now() - started - (gate?.pausedMs() ?? 0);
      const late = active > deadlineMs;
      const trickling = active >= slow.graceMs && receiving.wireBytes() * 1000 < slow.minBytesPerSecond * active;
      if (!late && !trickling) return;
      clearInterval(watch);
      if (res.headersSent) req.socket?.destroy();
      receiving.abort(new AppError('REQUEST_TIMEOUT', MESSAGES.requestTimeout));
    }, CHECK_EVERY_MS);
    watch.unref();
    receiving.done.then(
      ({ pieces, length, digest }) => {
        clearInterval(watch);
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
        clearInterval(watch);
        if (!res.headersSent) next(err);
      },
    );
  };
}
