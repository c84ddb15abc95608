/**
 * Idempotency-Key on PUT and POST (docs/upload-clients.md; both SDKs send it on writes when asked): the
 * first response to a key is kept for 24 hours per user, method and path (table idempotency_keys)
 * and a repeat of the same request gets it back without acting again; the same key, method and
 * path with another request → 422. The same key on another method or path is another key: both
 * SDKs' examples send one constant key for every new session.
 *
 * The first request claims the key by inserting a pending row (the primary key decides between
 * concurrent ones); the others wait for its response and replay it, so ten parallel requests with
 * one key make one write. Responses that say nothing was done (5xx) release the key instead.
 *
 * Never stored (the claim is released, so a repeat acts again):
 * - a response of a request that minted a secret — an API key or device token, a device code, a
 *   reset, invitation or share link, a browser session: everything minted through src/domain/tokens.ts
 *   (and device codes) marks the request (src/domain/issued-secrets.ts), whatever its route or the
 *   case of its path, so a new route that hands out a fresh secret needs nothing more;
 * - a response whose handler set `res.locals.noIdempotencyStore = true` (for a secret or a
 *   one-time value minted some other way);
 * - a response over 1 MiB (MAX_STORED_BYTES).
 */
import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { trackIssuedSecrets, type IssuedSecrets } from '../domain/issued-secrets';
import { invalid } from '../errors';
import type { Ctx, Deps } from '../services/context';
import { claimIdempotencyKey, completeIdempotencyClaim, deleteExpiredClaims, releaseIdempotencyClaim } from '../services/idempotency';
import { ctxOf } from './request-context';
import './types';

/** The largest response (bytes of its JSON) that is kept for replay. */
const MAX_STORED_BYTES = 1024 * 1024;
const CLEANUP_EVERY_MS = 10 * 60 * 1000;
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

/** The path of the request as sent (no query string). */
const pathOf = (req: Request) => {
  const q = req.originalUrl.indexOf('?');
  return q < 0 ? req.originalUrl : req.originalUrl.slice(0, q);
};

/** The scope of a key: method and path (sha256 hex, the table's fixed-width column). */
function scopeOf(req: Request): string {
  return crypto
    .createHash('sha256')
    .update(`${req.method} ${pathOf(req)}`)
    .digest('hex');
}

/** Fingerprint of the request: method, path and query, and the (decompressed) body bytes. */
function fingerprintOf(req: Request): string {
  return crypto
    .createHash('sha256')
    .update(`${req.method}\n${req.originalUrl}\n`)
    .update(req.bodyDigest ?? '')
    .digest('hex');
}

/** Why a response is not kept for replay, or null when it is kept. */
function notKeptBecause(res: Response, secrets: IssuedSecrets, json: string): string | null {
  if (secrets.issued) return 'it carries a freshly issued secret';
  if (res.locals.noIdempotencyStore === true) return 'its handler asked not to keep it';
  if (Buffer.byteLength(json, 'utf8') > MAX_STORED_BYTES) return 'it is over 1 MiB';
  return null;
}

export function idempotency(deps: Deps) {
  let lastCleanup = 0;

  const cleanup = (ctx: Ctx) => {
    if (Date.now() - lastCleanup < CLEANUP_EVERY_MS) return;
    lastCleanup = Date.now();
    deleteExpiredClaims(ctx).catch((err) => deps.logger.warn({ msg: 'idempotency cleanup failed', err: err instanceof Error ? err.message : String(err) }));
  };

  return async (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'PUT' && req.method !== 'POST') return next();
    const key = req.get('idempotency-key');
    if (key === undefined || !req.user) return next();
    if (!KEY_RE.test(key)) return next(invalid('Invalid Idempotency-Key: 1 to 255 visible ASCII characters'));
    const ctx = ctxOf(req, deps);
    cleanup(ctx);
    let got: Awaited<ReturnType<typeof claimIdempotencyKey>>;
    try {
      got = await claimIdempotencyKey(ctx, scopeOf(req), key, fingerprintOf(req));
    } catch (err) {
      return next(err);
    }
    if (!got.mine) {
      const c = got.claim;
      if (c.etag) res.setHeader('ETag', c.etag);
      res.setHeader('Idempotent-Replayed', 'true');
      res
        .status(c.status!)
        .type('application/json')
        .send(c.responseJson ?? '');
      return;
    }

    const { held } = got;
    const release = () => releaseIdempotencyClaim(ctx, held);
    const secrets: IssuedSecrets = { issued: false };
    let settled = false;
    const origJson = res.json.bind(res);
    const send = (json: string | undefined, body: unknown) => {
      if (json === undefined) return origJson(body);
      if (!res.get('Content-Type')) res.type('application/json');
      return res.send(json);
    };
    res.json = ((body: unknown) => {
      if (settled) return origJson(body);
      settled = true;
      const status = res.statusCode;
      const json: string | undefined = JSON.stringify(body);
      const skip = status >= 500 ? 'a 5xx frees the key' : notKeptBecause(res, secrets, json ?? '');
      const kept = skip
        ? release()
        : completeIdempotencyClaim(ctx, held, { status, json: json ?? '', etag: (res.getHeader('ETag') as string | undefined) ?? null });
      kept
        .catch((err) => {
          deps.logger.warn({ reqId: req.id, msg: 'idempotency: response not kept', err: err instanceof Error ? err.message : String(err) });
          return release().catch(() => undefined);
        })
        .finally(() => send(json, body));
      return res;
    }) as Response['json'];
    // Answered some other way, or the client went away first: the key is free again.
    res.on('close', () => {
      if (!settled) {
        settled = true;
        release().catch(() => undefined);
      }
    });
    trackIssuedSecrets(secrets, () => next());
  };
}
