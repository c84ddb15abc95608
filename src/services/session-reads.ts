/** Reads of one session and its content, all of one version (the doors stream what these hand them). */
import { CHUNK_BYTES } from '../data/content';
import type { ContentPart } from '../domain/session-row';
import { keptUpChunks } from '../data/content-versions';
import { partSizeOf } from '../data/sessions';
import * as access from './access';
import { withReads, type Ctx } from './context';
import type { OwnedSession } from './sessions';

/** A part's content: whole (read with its row) or chunk by chunk (see readSessionContent). */
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

/** Whether a part is read in more than one chunk, so that its answer streams (a long read). */
export const streamsLong = (row: OwnedSession, part: ContentPart): boolean => partSizeOf(row, part) > CHUNK_BYTES;

/**
 * A session the caller reads and one part of its content, all of one version. A part that fits in
 * one chunk comes with the row in a single statement (consistent by itself). A larger one is read
 * chunk by chunk on a snapshot, the row read again there, for as long as the reader keeps up;
 * a reader that waits longer gets the rest a chunk at a time, each read one statement checked
 * against the row's version (`keptUpChunks`): no connection is held while a download waits for a
 * slow or idle reader. Content replaced while such a reader waits ends the reading with an
 * error (the door cuts the answer short: never a mix of versions).
 */
export async function readSessionContent(
  ctx: Ctx,
  projectId: string,
  sessionId: string,
  part: ContentPart,
  fn: (row: OwnedSession, content: SessionContent) => Promise<void>,
  /** Whether the answer waits for its reader now (e.g. the response is backed up). */
  waiting: () => boolean = () => true,
): Promise<void> {
  const row = await access.requireReadableSession(ctx, projectId, sessionId, { part, upTo: CHUNK_BYTES });
  if (row.inline) return fn(row, row.inline);
  const snap = ctx.deps.db.lazySnapshot();
  try {
    const again = await access.requireReadableSession(withReads(ctx, snap), projectId, sessionId);
    const ref = { projectId: again.projectId, sessionId: again.id, part };
    await fn(again, keptUpChunks(snap, ctx.deps.db.reads, ref, { contentDigest: again.contentDigest, size: partSizeOf(again, part) }, waiting));
  } finally {
    await snap.release();
  }
}
