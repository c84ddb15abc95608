/**
 * `content migrate --to s3|db`: moves stored content between the database's chunk rows and S3
 * objects, one session per transaction. A session's parts are read on one snapshot, written to
 * the target (objects under new keys, or chunk rows), and swapped in a transaction that locks the
 * session row and finds its content unchanged; a session rewritten meanwhile is left for the next
 * run. Every committed session stays moved, so running the command again resumes where it
 * stopped; what it leaves behind in the bucket (an object uploaded for a transaction that did not
 * commit, or the objects of parts moved back to the database) is the sweep's.
 */
import { createHash } from 'node:crypto';
import { insertChunks, nameObjects, uploadPart } from '../content-writes';
import { toBuffer, marks, type Snapshot, type Sql } from '../sql';
import { inTransaction, type TxHandles } from '../transaction';
import type { ContentStore } from './index';

interface MigrateHandles extends TxHandles {
  reads: Sql;
  lazySnapshot(): Snapshot;
}

export interface MigrateProgress {
  /** Sessions with content in the source store when the run began. */
  total: number;
  /** Sessions looked at so far (moved, skipped or empty). */
  done: number;
  moved: number;
  /** Sessions changed while being moved: left where they are for the next run. */
  skipped: number;
  bytes: number;
}

const BATCH = 100;

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export async function migrateContent(
  db: MigrateHandles,
  store: ContentStore,
  to: 's3' | 'db',
  onProgress: (p: MigrateProgress) => void = () => undefined,
): Promise<MigrateProgress> {
  const objects = store.objects;
  if (!objects) throw new Error('content migrate needs a bucket: set S3_BUCKET (and the other S3_* settings)');
  const table = to === 's3' ? 'session_chunks' : 'session_objects';
  const [{ n }] = await db.reads.query<{ n: number }>(`SELECT COUNT(DISTINCT projectId, sessionId) AS n FROM ${table}`);
  const progress: MigrateProgress = { total: Number(n), done: 0, moved: 0, skipped: 0, bytes: 0 };
  onProgress({ ...progress });
  let after: [string, string] | null = null;
  for (;;) {
    const batch: Array<{ projectId: string; sessionId: string }> = await db.reads.query<{ projectId: string; sessionId: string }>(
      `SELECT DISTINCT projectId, sessionId FROM ${table} ${after ? 'WHERE (projectId, sessionId) > (?, ?)' : ''} ORDER BY projectId, sessionId LIMIT ${BATCH}`,
      ...(after ?? []),
    );
    if (batch.length === 0) break;
    for (const key of batch) {
      const outcome = to === 's3' ? await toObjects(db, store, key.projectId, key.sessionId) : await toChunks(db, store, key.projectId, key.sessionId);
      progress.done++;
      progress.total = Math.max(progress.total, progress.done);
      if (outcome === 'skipped') progress.skipped++;
      else if (outcome > 0) {
        progress.moved++;
        progress.bytes += outcome;
      }
      onProgress({ ...progress });
    }
    const last = batch[batch.length - 1];
    after = [last.projectId, last.sessionId];
  }
  return progress;
}

/** The session's content version, read before and compared under the row lock. */
async function versionOf(db: Sql, projectId: string, sessionId: string, lock = false): Promise<string | null> {
  const rows = await db.query<{ contentDigest: string; etag: string }>(
    `SELECT contentDigest, etag FROM sessions WHERE projectId = ? AND id = ?${lock ? ' FOR UPDATE' : ''}`,
    projectId,
    sessionId,
  );
  return rows[0] ? `${rows[0].contentDigest} ${rows[0].etag}` : null;
}

/** Chunk rows → objects. Bytes moved (0: nothing to move), or 'skipped'. */
async function toObjects(db: MigrateHandles, store: ContentStore, projectId: string, sessionId: string): Promise<number | 'skipped'> {
  const snap = db.lazySnapshot();
  let version: string | null;
  const parts = new Map<string, Buffer[]>();
  try {
    version = await versionOf(snap, projectId, sessionId);
    const rows = await snap.query<{ part: string; data: unknown }>(
      'SELECT part, data FROM session_chunks WHERE projectId = ? AND sessionId = ? ORDER BY part, seq',
      projectId,
      sessionId,
    );
    for (const r of rows) {
      const list = parts.get(r.part) ?? [];
      list.push(toBuffer(r.data));
      parts.set(r.part, list);
    }
  } finally {
    await snap.release();
  }
  if (version === null) return 0;
  // Empty parts stay one empty chunk row each (as writes in s3 mode leave them): nothing to fetch.
  const moving = [...parts].map(([part, bufs]) => ({ part, data: Buffer.concat(bufs) })).filter((p) => p.data.length > 0);
  if (moving.length === 0) return 0;
  const uploaded = await Promise.all(moving.map(({ part, data }) => uploadPart(store, sessionId, part, data)));
  return inTransaction(db, async (tx) => {
    if ((await versionOf(tx, projectId, sessionId, true)) !== version) return 'skipped' as const;
    const names = uploaded.map((u) => u.part);
    await tx.execute(`DELETE FROM session_chunks WHERE projectId = ? AND sessionId = ? AND part IN (${marks(names)})`, projectId, sessionId, ...names);
    await tx.execute(`DELETE FROM session_objects WHERE projectId = ? AND sessionId = ? AND part IN (${marks(names)})`, projectId, sessionId, ...names);
    await nameObjects(tx, projectId, sessionId, uploaded);
    return uploaded.reduce((n, u) => n + u.size, 0);
  });
}

/** Objects → chunk rows (the objects are left to the sweep). Bytes moved, or 'skipped'. */
async function toChunks(db: MigrateHandles, store: ContentStore, projectId: string, sessionId: string): Promise<number | 'skipped'> {
  const snap = db.lazySnapshot();
  let version: string | null;
  let refs: Array<{ part: string; objectKey: string; size: number; sha256: string }>;
  try {
    version = await versionOf(snap, projectId, sessionId);
    refs = await snap.query<{ part: string; objectKey: string; size: number; sha256: string }>(
      'SELECT part, objectKey, size, sha256 FROM session_objects WHERE projectId = ? AND sessionId = ?',
      projectId,
      sessionId,
    );
  } finally {
    await snap.release();
  }
  if (version === null || refs.length === 0) return 0;
  const fetched: Array<[string, Buffer]> = [];
  for (const r of refs) {
    const data = await store.objects!.get(r.objectKey);
    if (data.length !== Number(r.size) || sha256(data) !== r.sha256) {
      throw new Error(`object ${r.objectKey} (session ${projectId}/${sessionId}, ${r.part}) does not match its recorded size and sha256`);
    }
    fetched.push([r.part, data]);
  }
  return inTransaction(db, async (tx) => {
    if ((await versionOf(tx, projectId, sessionId, true)) !== version) return 'skipped' as const;
    const names = fetched.map(([part]) => part);
    // Still the objects read above (a write in between changes the version; this is a guard).
    const now = await tx.query<{ part: string; objectKey: string }>(
      `SELECT part, objectKey FROM session_objects WHERE projectId = ? AND sessionId = ? AND part IN (${marks(names)})`,
      projectId,
      sessionId,
      ...names,
    );
    const same = now.length === refs.length && now.every((r) => refs.some((x) => x.part === r.part && x.objectKey === r.objectKey));
    if (!same) return 'skipped' as const;
    await tx.execute(`DELETE FROM session_objects WHERE projectId = ? AND sessionId = ? AND part IN (${marks(names)})`, projectId, sessionId, ...names);
    await tx.execute(`DELETE FROM session_chunks WHERE projectId = ? AND sessionId = ? AND part IN (${marks(names)})`, projectId, sessionId, ...names);
    await insertChunks(tx, projectId, sessionId, fetched);
    return fetched.reduce((n, [, b]) => n + b.length, 0);
  });
}
