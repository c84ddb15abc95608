/**
 * The content store. Session content (markdown, raw data, and the upload CLI's session data) lives
 * apart from the session row: in session_chunks, in pieces of at most CHUNK_BYTES (CONTENT_STORE=db),
 * or as one S3 object per part and version named by a session_objects row (CONTENT_STORE=s3; see
 * ./content-store). Reads concatenate the pieces in order, or read the object the row names;
 * writes (./content-writes.ts) replace a part whole: objects are uploaded first under new keys,
 * before the write transaction, and the rows swapped in it, so a reader sees the old content or the
 * new, never a mix. A part is in one store or the other; reads look in the configured one first.
 */
import { contentStore } from './content-store';
import type { ObjectStore } from './content-store/s3';
import type { ContentPart } from '../domain/session-row';
import { inScopes, toBuffer, type Sql } from './sql';

export const CHUNK_BYTES = 1024 * 1024;

/**
 * The part holding the markdown's stored exchange index (src/domain/exchanges.ts), written and
 * removed with the markdown, so that it is always of the markdown beside it.
 */
export const EXCHANGES_PART = 'exchidx';

export function readContent(db: Sql, projectId: string, sessionId: string, part: ContentPart): Promise<Buffer> {
  return readPart(db, projectId, sessionId, part);
}

/** A part's object, when the part is stored as one. */
export interface ObjectRef {
  objectKey: string;
  size: number;
}

async function objectOf(db: Sql, projectId: string, sessionId: string, part: string): Promise<ObjectRef | null> {
  const rows = await db.query<{ objectKey: string; size: number }>(
    'SELECT objectKey, size FROM session_objects WHERE projectId = ? AND sessionId = ? AND part = ?',
    projectId,
    sessionId,
    part,
  );
  return rows[0] ? { objectKey: rows[0].objectKey, size: Number(rows[0].size) } : null;
}

/** The configured bucket (an error when there is none). */
export function bucket(): ObjectStore {
  const objects = contentStore().objects;
  if (!objects) throw new Error('content is stored in S3 but no bucket is configured (S3_BUCKET)');
  return objects;
}

/**
 * Looks in the configured store first, then the other, then the first again: a part moved by
 * `content migrate` between two statements (outside a snapshot) is still found in one of them.
 * `fromChunks`/`fromObject` answer null when the part is not there.
 */
export async function located<T>(fromChunks: () => Promise<T | null>, fromObject: () => Promise<T | null>): Promise<T | null> {
  const [first, second] = contentStore().writeTo === 's3' ? [fromObject, fromChunks] : [fromChunks, fromObject];
  return (await first()) ?? (await second()) ?? (await first());
}

/** A stored part's pieces joined in order (empty when it has none). */
async function readPart(db: Sql, projectId: string, sessionId: string, part: ContentPart | typeof EXCHANGES_PART): Promise<Buffer> {
  const found = await located(
    async () => {
      const rows = await db.query<{ data: unknown }>(
        'SELECT data FROM session_chunks WHERE projectId = ? AND sessionId = ? AND part = ? ORDER BY seq',
        projectId,
        sessionId,
        part,
      );
      if (rows.length === 0) return null;
      return rows.length === 1 ? toBuffer(rows[0].data) : Buffer.concat(rows.map((r) => toBuffer(r.data)));
    },
    async () => {
      const o = await objectOf(db, projectId, sessionId, part);
      return o ? bucket().get(o.objectKey) : null;
    },
  );
  return found ?? Buffer.alloc(0);
}

/**
 * The content one chunk at a time, for streaming: at most CHUNK_BYTES in memory per reader.
 * Call on a snapshot (DbHandles.lazySnapshot) so that all chunks are of one version.
 */
export async function* contentChunks(db: Sql, projectId: string, sessionId: string, part: ContentPart): AsyncGenerator<Buffer> {
  const chunk = async (seq: number): Promise<Buffer | null> => {
    const rows = await db.query<{ data: unknown }>(
      'SELECT data FROM session_chunks WHERE projectId = ? AND sessionId = ? AND part = ? AND seq = ?',
      projectId,
      sessionId,
      part,
      seq,
    );
    return rows[0] ? toBuffer(rows[0].data) : null;
  };
  const first = await located<Buffer | ObjectRef>(
    () => chunk(0),
    () => objectOf(db, projectId, sessionId, part),
  );
  if (!first) return;
  if (!Buffer.isBuffer(first)) {
    // The object of the version the row names: never overwritten, so all of one version.
    yield* inChunks(bucket().stream(first.objectKey));
    return;
  }
  if (first.length) yield first;
  for (let seq = 1; ; seq++) {
    const rows = await db.query<{ data: unknown }>(
      'SELECT data FROM session_chunks WHERE projectId = ? AND sessionId = ? AND part = ? AND seq = ?',
      projectId,
      sessionId,
      part,
      seq,
    );
    if (!rows[0]) return;
    const buf = toBuffer(rows[0].data);
    if (buf.length) yield buf;
  }
}

/** A stream's pieces gathered into CHUNK_BYTES pieces (the last one shorter): readers see the same pieces from either store. */
async function* inChunks(stream: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  let bytes = 0;
  for await (const piece of stream) {
    let rest = piece;
    while (bytes + rest.length >= CHUNK_BYTES) {
      const take = CHUNK_BYTES - bytes;
      held.push(rest.subarray(0, take));
      yield Buffer.concat(held);
      rest = rest.subarray(take);
      held = [];
      bytes = 0;
    }
    if (rest.length) {
      held.push(rest);
      bytes += rest.length;
    }
  }
  if (bytes) yield Buffer.concat(held);
}

/** Bytes [start, end) of the markdown: only the chunk rows that hold them, only those bytes. */
export function readMarkdownRange(db: Sql, projectId: string, sessionId: string, start: number, end: number): Promise<Buffer> {
  return readContentRange(db, { projectId, sessionId, part: 'markdown' }, { start, end });
}

/** One part of one session. */
export interface PartRef {
  projectId: string;
  sessionId: string;
  part: ContentPart;
}

/** Bytes [start, end). */
interface ByteRange {
  start: number;
  end: number;
}

/** Bytes [start, end) of one part (fewer past its end): only the chunk rows that hold them, only those bytes. */
export async function readContentRange(db: Sql, ref: PartRef, range: ByteRange): Promise<Buffer> {
  const { projectId, sessionId, part } = ref;
  const { start, end } = range;
  if (end <= start) return Buffer.alloc(0);
  const fromChunks = await chunkRange(db, ref, range);
  if (fromChunks !== null) return fromChunks;
  // No chunk row where the range starts: the part is an object, or the range starts past its end.
  const where = await located<ObjectRef | 'chunks'>(
    async () => ((await db.query('SELECT 1 FROM session_chunks WHERE projectId = ? AND sessionId = ? AND part = ? AND seq = 0', projectId, sessionId, part)).length ? 'chunks' : null),
    () => objectOf(db, projectId, sessionId, part),
  );
  if (where === null) return Buffer.alloc(0);
  if (where === 'chunks') return (await chunkRange(db, ref, range)) ?? Buffer.alloc(0);
  return bucket().getRange(where.objectKey, start, Math.min(end, where.size));
}

/** The range from chunk rows; null when there is no row where it starts. */
async function chunkRange(db: Sql, { projectId, sessionId, part }: PartRef, { start, end }: ByteRange): Promise<Buffer | null> {
  const first = Math.floor(start / CHUNK_BYTES);
  const last = Math.floor((end - 1) / CHUNK_BYTES);
  const parts: Buffer[] = [];
  for (let seq = first; seq <= last; seq++) {
    const from = seq === first ? start - seq * CHUNK_BYTES : 0;
    const to = seq === last ? end - seq * CHUNK_BYTES : CHUNK_BYTES;
    const rows = await db.query<{ data: unknown }>(
      `SELECT SUBSTRING(data, ?, ?) AS data FROM session_chunks WHERE projectId = ? AND sessionId = ? AND part = ? AND seq = ?`,
      from + 1,
      to - from,
      projectId,
      sessionId,
      part,
      seq,
    );
    const d = rows[0]?.data;
    if (d === undefined) {
      if (seq === first) return null;
      break;
    }
    parts.push(toBuffer(d));
  }
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}

interface ContentKey {
  projectId: string;
  sessionId: string;
}

/** Markdown of several of a user's sessions (one statement per store), keyed `${projectId}/${sessionId}`. */
export async function markdownOfSessions(db: Sql, scopes: readonly string[], keys: readonly ContentKey[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (keys.length === 0) return out;
  const rows = await db.query<{ projectId: string; sessionId: string; data: unknown }>(
    `SELECT c.projectId, c.sessionId, c.data FROM session_chunks c JOIN sessions s ON s.projectId = c.projectId AND s.id = c.sessionId
      WHERE ${inScopes('s.userId', scopes)} AND c.part = 'markdown' AND (c.projectId, c.sessionId) IN (${keys.map(() => '(?, ?)').join(', ')})
      ORDER BY c.projectId, c.sessionId, c.seq`,
    ...scopes,
    ...keys.flatMap((k) => [k.projectId, k.sessionId]),
  );
  const parts = new Map<string, Buffer[]>();
  for (const r of rows) {
    const k = `${r.projectId}/${r.sessionId}`;
    const list = parts.get(k) ?? [];
    list.push(toBuffer(r.data));
    parts.set(k, list);
  }
  for (const [k, bufs] of parts) out.set(k, Buffer.concat(bufs).toString('utf8'));
  const missing = keys.filter((k) => !parts.has(`${k.projectId}/${k.sessionId}`));
  if (missing.length && contentStore().objects) {
    const objects = await db.query<{ projectId: string; sessionId: string; objectKey: string }>(
      `SELECT o.projectId, o.sessionId, o.objectKey FROM session_objects o JOIN sessions s ON s.projectId = o.projectId AND s.id = o.sessionId
        WHERE ${inScopes('s.userId', scopes)} AND o.part = 'markdown' AND (o.projectId, o.sessionId) IN (${missing.map(() => '(?, ?)').join(', ')})`,
      ...scopes,
      ...missing.flatMap((k) => [k.projectId, k.sessionId]),
    );
    for (const [i, data] of (await fetchObjects(objects.map((o) => o.objectKey))).entries()) {
      out.set(`${objects[i].projectId}/${objects[i].sessionId}`, data.toString('utf8'));
    }
  }
  return out;
}

/** Whole objects, a few at a time, in the order given. */
async function fetchObjects(keys: readonly string[]): Promise<Buffer[]> {
  const out: Buffer[] = new Array<Buffer>(keys.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < keys.length; i = next++) out[i] = await bucket().get(keys[i]);
  };
  await Promise.all(Array.from({ length: Math.min(8, keys.length) }, worker));
  return out;
}

/** The stored exchange index of a session's markdown, or null when none was stored. */
export async function readStoredExchangeIndex(db: Sql, projectId: string, sessionId: string): Promise<Buffer | null> {
  const stored = await readPart(db, projectId, sessionId, EXCHANGES_PART);
  return stored.length > 0 ? stored : null;
}

/** Drops a stored part, in whichever store it is (an object is left to the sweep); call inside the write transaction. */
export async function deleteContentPart(tx: Sql, projectId: string, sessionId: string, part: ContentPart): Promise<void> {
  await tx.execute('DELETE FROM session_chunks WHERE projectId = ? AND sessionId = ? AND part = ?', projectId, sessionId, part);
  await tx.execute('DELETE FROM session_objects WHERE projectId = ? AND sessionId = ? AND part = ?', projectId, sessionId, part);
}

/** The markdown chunks of these sessions (any owner), one statement per store: one version each, in order. */
export async function markdownChunksOf(db: Sql, keys: readonly ContentKey[]): Promise<Array<{ projectId: string; sessionId: string; data: Buffer }>> {
  const rows = await db.query<{ projectId: string; sessionId: string; data: unknown }>(
    `SELECT projectId, sessionId, data FROM session_chunks
      WHERE part = 'markdown' AND (${keys.map(() => '(projectId = ? AND sessionId = ?)').join(' OR ')})
      ORDER BY projectId, sessionId, seq`,
    ...keys.flatMap((k) => [k.projectId, k.sessionId]),
  );
  const out = rows.map((r) => ({ projectId: r.projectId, sessionId: r.sessionId, data: toBuffer(r.data) }));
  if (!contentStore().objects) return out;
  const found = new Set(out.map((r) => `${r.projectId}/${r.sessionId}`));
  const missing = keys.filter((k) => !found.has(`${k.projectId}/${k.sessionId}`));
  if (missing.length === 0) return out;
  const objects = await db.query<{ projectId: string; sessionId: string; objectKey: string }>(
    `SELECT projectId, sessionId, objectKey FROM session_objects
      WHERE part = 'markdown' AND (${missing.map(() => '(projectId = ? AND sessionId = ?)').join(' OR ')})`,
    ...missing.flatMap((k) => [k.projectId, k.sessionId]),
  );
  const data = await fetchObjects(objects.map((o) => o.objectKey));
  return [...out, ...objects.map((o, i) => ({ projectId: o.projectId, sessionId: o.sessionId, data: data[i] }))];
}
