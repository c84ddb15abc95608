/**
 * Idempotency-Key on PUT and POST (contract §15; both SDKs send it on writes when asked): the
 * first response to a key is kept for 24 hours per user (table idempotency_keys) and a repeat of
 * the same request gets it back without acting again; the same key with another request → 422.
 *
 * The first request claims the key by inserting a pending row (the primary key decides between
 * concurrent ones); the others wait for its response and replay it, so ten parallel requests with
 * one key make one write. Responses that say nothing was done (5xx) release the key instead.
 */
import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { isDuplicateKey } from '../data/errors';
import * as store from '../data/idempotency';
import { AppError, invalid, MESSAGES } from '../errors';
import type { Deps } from '../services/context';
import './types';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A pending claim older than this belongs to a request that never finished (process died). */
const STALE_PENDING_MS = 10 * 60 * 1000;
/** How long a repeat waits for the first request's response before giving up with a 409. */
const WAIT_MS = 5 * 60 * 1000;
const CLEANUP_EVERY_MS = 10 * 60 * 1000;
const KEY_RE = /^[\x21-\x7e]{1,255}$/;
/** Routes whose responses carry credentials: never stored, so the header is not honoured there. */
const EXCLUDED = /^\/(keys|auth)(\/|$)|^\/device-/;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Fingerprint of the request: method, path and query, and the (decompressed) body bytes. */
function fingerprintOf(req: Request): string {
  return crypto
    .createHash('sha256')
    .update(`${req.method}\n${req.originalUrl}\n`)
    .update(req.bodyDigest ?? '')
    .digest('hex');
}

export function idempotency(deps: Deps) {
  const db = deps.db.writes;
  let lastCleanup = 0;

  const cleanup = () => {
    if (Date.now() - lastCleanup < CLEANUP_EVERY_MS) return;
    lastCleanup = Date.now();
    store
      .deleteClaimsBefore(db, new Date(Date.now() - IDEMPOTENCY_TTL_MS))
      .catch((err) => deps.logger.warn({ msg: 'idempotency cleanup failed', err: String(err?.message ?? err) }));
  };

  const release = (userId: string, key: string, createdAt: Date) => store.releaseClaim(db, userId, key, createdAt);

  /** Our claim on the key, or the existing one (after waiting for its response when pending). */
  async function claim(userId: string, key: string, fingerprint: string): Promise<{ mine: true; createdAt: Date } | { mine: false; claim: store.IdempotencyClaim }> {
    const waitUntil = Date.now() + WAIT_MS;
    let delay = 10;
    for (;;) {
      const createdAt = new Date();
      try {
        await store.insertClaim(db, userId, key, fingerprint, createdAt);
        return { mine: true, createdAt };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const existing = await store.claimOf(db, userId, key);
      if (!existing) continue; // released or expired between our two statements
      const age = Date.now() - existing.createdAt.getTime();
      if (age > IDEMPOTENCY_TTL_MS || (existing.status === null && age > STALE_PENDING_MS)) {
        await store.deleteClaim(db, userId, key, existing.createdAt);
        continue;
      }
      if (existing.fingerprint !== fingerprint) throw new AppError('UNPROCESSABLE', MESSAGES.idempotencyMismatch);
      if (existing.status !== null) return { mine: false, claim: existing };
      if (Date.now() > waitUntil) throw new AppError('CONFLICT', 'A request with this Idempotency-Key is still in progress');
      await sleep(delay);
      delay = Math.min(delay * 2, 200);
    }
  }

  return async (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'PUT' && req.method !== 'POST') return next();
    const key = req.get('idempotency-key');
    if (key === undefined || !req.user || EXCLUDED.test(req.path)) return next();
    if (!KEY_RE.test(key)) return next(invalid('Invalid Idempotency-Key: 1 to 255 visible ASCII characters'));
    const userId = req.user.id;
    cleanup();
    let got: Awaited<ReturnType<typeof claim>>;
    try {
      got = await claim(userId, key, fingerprintOf(req));
    } catch (err) {
      return next(err);
    }
    if (!got.mine) {
      const c = got.claim;
      if (c.etag) res.setHeader('ETag', c.etag);
      res.setHeader('Idempotent-Replayed', 'true');
      res.status(c.status!).type('application/json').send(c.responseJson ?? '');
      return;
    }

    const { createdAt } = got;
    let settled = false;
    const origJson = res.json.bind(res);
    res.json = ((body: unknown) => {
      if (settled) return origJson(body);
      settled = true;
      const status = res.statusCode;
      const kept =
        status >= 500
          ? release(userId, key, createdAt)
          : store.completeClaim(db, userId, key, createdAt, {
              status,
              json: JSON.stringify(body),
              etag: (res.getHeader('ETag') as string | undefined) ?? null,
            });
      kept
        .catch((err) => {
          deps.logger.warn({ reqId: req.id, msg: 'idempotency: response not kept', err: String(err?.message ?? err) });
          return release(userId, key, createdAt).catch(() => undefined);
        })
        .finally(() => origJson(body));
      return res;
    }) as Response['json'];
    // Answered some other way, or the client went away first: the key is free again.
    res.on('close', () => {
      if (!settled) {
        settled = true;
        release(userId, key, createdAt).catch(() => undefined);
      }
    });
    next();
  };
}
