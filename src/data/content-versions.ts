/**
 * One version of a stored part read piece by piece (the export's second pass, the long reads of
 * services/session-reads.ts): every piece is checked against the version first seen, so content
 * replaced or deleted meanwhile stops the read (ContentChangedError) instead of mixing versions.
 */
import { bucket, CHUNK_BYTES, contentChunks, located, type ObjectRef, type PartRef } from './content';
import { toBuffer, type Snapshot, type Sql } from './sql';

/** One version of a part: the session's `contentDigest` when it was read, and the part's size then. */
export interface PartVersion {
  contentDigest: string;
  size: number;
}

/** Content replaced (or the session deleted) while it was being read piece by piece. */
export class ContentChangedError extends Error {
  constructor(ref: PartRef) {
    super(`the ${ref.part} of session ${ref.projectId}/${ref.sessionId} changed while it was read`);
  }
}

const VERSION_CHUNK = `SELECT c.data FROM session_chunks c JOIN sessions s ON s.projectId = c.projectId AND s.id = c.sessionId
  WHERE c.projectId = ? AND c.sessionId = ? AND c.part = ? AND c.seq = ? AND s.contentDigest = ?`;
const VERSION_OBJECT = `SELECT o.objectKey, o.size FROM session_objects o JOIN sessions s ON s.projectId = o.projectId AND s.id = o.sessionId
  WHERE o.projectId = ? AND o.sessionId = ? AND o.part = ? AND s.contentDigest = ?`;

/**
 * One version of a part, CHUNK_BYTES at a time, without a snapshot: each piece is one statement
 * (or one ranged GET of the object) that ends before the piece is handed on, so nothing is held
 * while the consumer waits (a download waiting for a slow reader). Every statement also checks the
 * session's `contentDigest`: a piece comes from that version or not at all. A part replaced
 * meanwhile ends the reading with ContentChangedError (never a mix of versions); an object, never
 * overwritten, is read to its end once found (the sweep keeps replaced ones for its grace period).
 */
export async function* versionChunks(db: Sql, ref: PartRef, version: PartVersion, start = 0): AsyncGenerator<Buffer> {
  const { projectId, sessionId, part } = ref;
  const fromChunk = async (seq: number): Promise<Buffer | null> => {
    const rows = await db.query<{ data: unknown }>(VERSION_CHUNK, projectId, sessionId, part, seq, version.contentDigest);
    return rows[0] ? toBuffer(rows[0].data) : null;
  };
  const fromObject = async (): Promise<ObjectRef | null> => {
    const rows = await db.query<{ objectKey: string; size: number }>(VERSION_OBJECT, projectId, sessionId, part, version.contentDigest);
    return rows[0] ? { objectKey: rows[0].objectKey, size: Number(rows[0].size) } : null;
  };
  // Pieces are CHUNK_BYTES long but the last (in either store): `start` is where one begins.
  let at = start;
  for (let seq = start / CHUNK_BYTES; at < version.size; seq++) {
    const found = await located<Buffer | ObjectRef>(() => fromChunk(seq), fromObject);
    if (found === null) throw new ContentChangedError(ref);
    if (Buffer.isBuffer(found)) {
      if (found.length === 0) throw new ContentChangedError(ref);
      at += found.length;
      yield found;
      continue;
    }
    // The object named for this version: the rest of it by ranges, each request over before its piece goes on.
    const end = Math.min(version.size, found.size);
    while (at < end) {
      const piece = await bucket().getRange(found.objectKey, at, Math.min(end, at + CHUNK_BYTES));
      if (piece.length === 0) throw new ContentChangedError(ref);
      at += piece.length;
      yield piece;
    }
    if (at < version.size) throw new ContentChangedError(ref);
  }
}

/**
 * How often a waiting reader is looked at: one found waiting at two looks in a row (its answer
 * backed up, the next chunk not asked for) lets its snapshot go (see keptUpChunks).
 */
export const SNAPSHOT_HOLD_MS = 250;

/**
 * Runs `onStall` once `waiting()` has been true at two looks `ms` apart, the first `ms` from now;
 * the returned function stops looking. Between two looks the event loop polls I/O, so a reader
 * that is merely slowed by a busy process is not taken for one that stopped.
 */
function whenStalled(ms: number, waiting: () => boolean, onStall: () => void): () => void {
  let seen = 0;
  let timer: NodeJS.Timeout;
  const look = () => {
    seen = waiting() ? seen + 1 : 0;
    if (seen >= 2) onStall();
    else timer = setTimeout(look, ms);
  };
  timer = setTimeout(look, ms);
  return () => clearTimeout(timer);
}

/**
 * One version of a part, read on `snap` (a snapshot of that version) for as long as the consumer
 * keeps up. When it stops asking for chunks while `waiting()` says it waits for its own reader
 * (a response backed up), the snapshot is released (its connection goes back to the pool) and
 * the rest is read by version (versionChunks), each chunk a statement of its own. So a reader
 * that keeps up gets the version whatever is written meanwhile, and one that stops holds
 * nothing; content replaced while such a reader waits ends its reading with ContentChangedError.
 */
export async function* keptUpChunks(snap: Snapshot, reads: Sql, ref: PartRef, version: PartVersion, waiting: () => boolean): AsyncGenerator<Buffer> {
  const chunks = contentChunks(snap, ref.projectId, ref.sessionId, ref.part);
  let at = 0;
  let released = false;
  try {
    while (!released) {
      const next = await chunks.next();
      if (next.done) return;
      at += next.value.length;
      // Suspended at the yield, neither this nor `chunks` is in a statement: the snapshot (and an
      // object's download, which `chunks` ends) can go.
      const stop = whenStalled(SNAPSHOT_HOLD_MS, waiting, () => {
        released = true;
        void chunks.return(undefined);
        void snap.release();
      });
      try {
        yield next.value;
      } finally {
        stop();
      }
    }
  } finally {
    await chunks.return(undefined);
  }
  yield* versionChunks(reads, ref, version, at);
}
