/** Reads of one session and its content, all of one version (the doors stream what these hand them). */
import { CHUNK_BYTES, contentChunks, type ContentPart } from '../data/content';
import * as access from './access';
import { withReads, type Ctx } from './context';
import type { OwnedSession } from './sessions';

export type { ContentPart };

/** A part's content: whole (read with its row) or chunk by chunk from a snapshot. */
export type SessionContent = Buffer | AsyncIterable<Buffer>;

/**
 * A session the caller reads, on one snapshot released whatever happens: `fn` gets the row and a
 * context reading through that snapshot (for anything else of the same version).
 */
export async function onSessionSnapshot(
  ctx: Ctx,
  projectId: string,
  sessionId: string,
  fn: (row: OwnedSession & { role: access.ProjectRole }, snapshotCtx: Ctx) => Promise<void>,
): Promise<void> {
  const snap = ctx.deps.db.lazySnapshot();
  try {
    const sctx = withReads(ctx, snap);
    await fn(await access.requireReadableSession(sctx, projectId, sessionId), sctx);
  } finally {
    await snap.release();
  }
}

/**
 * A session the caller reads and one part of its content, all of one version. A part that fits in
 * one chunk comes with the row in a single statement (consistent by itself); a larger one is read
 * on a snapshot, chunk by chunk, the row read again there. The snapshot lasts as long as `fn`.
 */
export async function readSessionContent(
  ctx: Ctx,
  projectId: string,
  sessionId: string,
  part: ContentPart,
  fn: (row: OwnedSession, content: SessionContent) => Promise<void>,
): Promise<void> {
  const row = await access.requireReadableSession(ctx, projectId, sessionId, { part, upTo: CHUNK_BYTES });
  if (row.inline) return fn(row, row.inline);
  const snap = ctx.deps.db.lazySnapshot();
  try {
    const again = await access.requireReadableSession(withReads(ctx, snap), projectId, sessionId);
    await fn(again, contentChunks(snap, again.projectId, again.id, part));
  } finally {
    await snap.release();
  }
}
