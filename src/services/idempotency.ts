/**
 * Idempotency-Key claims (table idempotency_keys): the first response to a key is kept for 24 hours
 * per user, method and path; a repeat of the same request gets it back; the same key, method and
 * path with another request → 422. The HTTP side (which requests, what is kept) is
 * src/http/idempotency.ts; this is the rule over the stored claims.
 *
 * The first request claims the key by inserting a pending row (the primary key decides between
 * concurrent ones); the others wait for its response and replay it, so ten parallel requests with
 * one key make one write.
 */
import { isDuplicateKey } from '../data/errors';
import * as store from '../data/idempotency';
import { AppError, MESSAGES } from '../errors';
import type { Ctx } from './context';

const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A pending claim older than this belongs to a request that never finished (process died). */
const STALE_PENDING_MS = 10 * 60 * 1000;
/** How long a repeat waits for the first request's response before giving up with a 409. */
const WAIT_MS = 5 * 60 * 1000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The caller's claim on a key in a scope (sha256 hex of "<METHOD> <path>"), as made. */
interface HeldClaim {
  id: store.ClaimId;
  createdAt: Date;
}

/**
 * The caller's claim on `key` in `scope`, or the existing one (after waiting for its response
 * while it is pending): another request's fingerprint → 422, still pending after 5 minutes → 409.
 */
export async function claimIdempotencyKey(
  ctx: Ctx,
  scope: string,
  key: string,
  fingerprint: string,
): Promise<{ mine: true; held: HeldClaim } | { mine: false; claim: store.IdempotencyClaim }> {
  const db = ctx.deps.db.writes;
  const id: store.ClaimId = { userId: ctx.user.id, scope, key };
  const waitUntil = Date.now() + WAIT_MS;
  let delay = 10;
  for (;;) {
    const createdAt = new Date();
    try {
      await store.insertClaim(db, id, fingerprint, createdAt);
      return { mine: true, held: { id, createdAt } };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const existing = await store.claimOf(db, id);
    if (!existing) continue; // released or expired between our two statements
    const age = Date.now() - existing.createdAt.getTime();
    if (age > IDEMPOTENCY_TTL_MS || (existing.status === null && age > STALE_PENDING_MS)) {
      await store.deleteClaim(db, id, existing.createdAt);
      continue;
    }
    if (existing.fingerprint !== fingerprint) throw new AppError('UNPROCESSABLE', MESSAGES.idempotencyMismatch);
    if (existing.status !== null) return { mine: false, claim: existing };
    if (Date.now() > waitUntil) throw new AppError('CONFLICT', 'A request with this Idempotency-Key is still in progress');
    await sleep(delay);
    delay = Math.min(delay * 2, 200);
  }
}

/** Frees the key: a repeat acts again. */
export function releaseIdempotencyClaim(ctx: Ctx, held: HeldClaim): Promise<void> {
  return store.releaseClaim(ctx.deps.db.writes, held.id, held.createdAt);
}

/** Keeps the response for replay. */
export function completeIdempotencyClaim(ctx: Ctx, held: HeldClaim, response: { status: number; json: string; etag: string | null }): Promise<void> {
  return store.completeClaim(ctx.deps.db.writes, held.id, held.createdAt, response);
}

/** Deletes everyone's claims past their 24 hours (housekeeping, done on the way by any caller's request). */
export function deleteExpiredClaims(ctx: Ctx): Promise<void> {
  return store.deleteClaimsBefore(ctx.deps.db.writes, new Date(Date.now() - IDEMPOTENCY_TTL_MS));
}
