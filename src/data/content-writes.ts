/**
 * Content writes. A write replaces a session's parts whole: in s3 mode the new objects are
 * uploaded under new keys before the write transaction begins (stageContent), so that no lock is
 * held while bytes travel to the bucket, and the transaction swaps the rows naming them
 * (writeContent); a reader sees the old content or the new, never a mix. Until the commit no row
 * names the new objects, so nothing reads them; objects that no commit ever names (a rollback, a
 * crash before the commit, content staged and then not needed) are left to the sweep
 * (./content-store/sweep.ts), which deletes unnamed objects once they are past its grace period.
 *
 * withStagedContent runs a write transaction around this: a transaction that finds it must write
 * content it has not staged rolls back, the content is staged outside any transaction, and the
 * transaction runs again with it (writes that turn out to change no content stage nothing).
 */
import { createHash, randomUUID } from 'node:crypto';
import { bucket, CHUNK_BYTES, EXCHANGES_PART } from './content';
import type { ContentPart } from '../domain/session-row';
import { contentStore, newObjectKey, type ContentStore } from './content-store';
import type { Sql } from './sql';
import { marks } from './sql';
import type { Tx } from './transaction';

/** The parts of a session written together (see writeContent). */
export interface ContentParts {
  markdown: Buffer;
  raw: Buffer;
  session?: Buffer;
  exchanges?: Buffer | null;
}

/** An object uploaded for one part, named by no row until writeContent writes one. */
interface StagedObject {
  part: string;
  objectKey: string;
  size: number;
  sha256: string;
}

/** A session's content ready to be written: in s3 mode its non-empty parts already uploaded. */
interface StagedContent {
  readonly sessionId: string;
  readonly parts: ContentParts;
  readonly objects: readonly StagedObject[];
}

/** The parts replaced by a write of `parts`, and the ones written (with their bytes). */
function planOf(parts: ContentParts): { replaced: string[]; written: Array<[string, Buffer]> } {
  const content: ContentPart[] = parts.session ? ['markdown', 'raw', 'session'] : ['markdown', 'raw'];
  const written: Array<[string, Buffer]> = content.map((part) => [part, parts[part]!]);
  if (parts.exchanges) written.push([EXCHANGES_PART, parts.exchanges]);
  return { replaced: [...content, EXCHANGES_PART], written };
}

/**
 * Uploads the non-empty parts as objects, each under a new key (s3 mode; nothing to do in db
 * mode). Call before the write transaction begins, so that no lock is held while they upload:
 * until a transaction that names them commits, nothing reads them, and objects no transaction
 * ever names (a rollback, a crash, content staged and then not needed) are the sweep's.
 */
export async function stageContent(sessionId: string, parts: ContentParts): Promise<StagedContent> {
  const store = contentStore();
  if (store.writeTo !== 's3') return { sessionId, parts, objects: [] };
  const objects = await Promise.all(
    planOf(parts)
      .written.filter(([, buf]) => buf.length > 0)
      .map(([part, buf]) => uploadPart(store, sessionId, part, buf)),
  );
  return { sessionId, parts, objects };
}

/** One part uploaded as a new object of `store`'s bucket, under a key never used before. */
export async function uploadPart(store: ContentStore, sessionId: string, part: string, data: Buffer): Promise<StagedObject> {
  const objectKey = newObjectKey(store, sessionId, part, randomUUID());
  await (store.objects ?? bucket()).put(objectKey, data);
  return { part, objectKey, size: data.length, sha256: createHash('sha256').update(data).digest('hex') };
}

/** True when `staged` holds these very parts of this session (the same bytes). */
function isStaged(staged: StagedContent, sessionId: string, parts: ContentParts): boolean {
  if (staged.sessionId !== sessionId) return false;
  const a = planOf(staged.parts).written;
  const b = planOf(parts).written;
  return a.length === b.length && a.every(([part, buf], i) => b[i][0] === part && (b[i][1] === buf || b[i][1].equals(buf)));
}

/**
 * Replaces markdown and raw data of a session, and its session data when `parts.session` is given
 * (an upload without session data keeps the stored one), and the markdown's exchange index (kept
 * only when `parts.exchanges` is given), with content staged by stageContent; call inside the
 * write transaction. The rows are swapped here: the replaced objects stay for readers that hold
 * the old rows (the sweep deletes them after its grace period). `fresh`: the session's row was
 * inserted in this transaction, so there are no rows to replace (one statement or two fewer).
 */
export async function writeContent(tx: Sql, projectId: string, staged: StagedContent, fresh = false): Promise<void> {
  const { sessionId, objects } = staged;
  const { replaced, written } = planOf(staged.parts);
  const store = contentStore();
  if (store.writeTo === 's3' && objects.length !== written.filter(([, buf]) => buf.length > 0).length) {
    throw new Error('content written in s3 mode was not staged (stageContent)');
  }
  if (!fresh) {
    await tx.execute(`DELETE FROM session_chunks WHERE projectId = ? AND sessionId = ? AND part IN (${marks(replaced)})`, projectId, sessionId, ...replaced);
    if (store.objects) {
      await tx.execute(`DELETE FROM session_objects WHERE projectId = ? AND sessionId = ? AND part IN (${marks(replaced)})`, projectId, sessionId, ...replaced);
    }
  }
  await nameObjects(tx, projectId, sessionId, objects);
  const inRows = store.writeTo === 's3' ? written.filter(([, buf]) => buf.length === 0) : written;
  await insertChunks(tx, projectId, sessionId, inRows);
}

/** session_objects rows naming uploaded objects; call inside the write transaction. */
export async function nameObjects(tx: Sql, projectId: string, sessionId: string, objects: readonly StagedObject[]): Promise<void> {
  for (const o of objects) {
    await tx.execute(
      'INSERT INTO session_objects (projectId, sessionId, part, objectKey, size, sha256) VALUES (?, ?, ?, ?, ?, ?)',
      projectId,
      sessionId,
      o.part,
      o.objectKey,
      o.size,
      o.sha256,
    );
  }
}

/**
 * Chunk rows of these parts (one row even for an empty part, so that "no rows" can only mean "no
 * session"). Consecutive chunks share a statement while their bytes together stay within
 * CHUNK_BYTES (no statement outgrows what one chunk may be): a typical session's parts are one
 * round trip, not one per part.
 */
export async function insertChunks(tx: Sql, projectId: string, sessionId: string, written: ReadonlyArray<readonly [string, Buffer]>): Promise<void> {
  // Chunks go through the binary protocol where there is one: no escaping of 1 MiB on the event loop.
  const insert = tx.executeBinary ? tx.executeBinary.bind(tx) : tx.execute.bind(tx);
  const rows: Array<[string, number, Buffer]> = [];
  for (const [part, buf] of written) {
    for (let seq = 0, off = 0; seq === 0 || off < buf.length; seq++, off += CHUNK_BYTES) rows.push([part, seq, buf.subarray(off, off + CHUNK_BYTES)]);
  }
  for (let i = 0; i < rows.length; ) {
    let bytes = rows[i][2].length;
    let end = i + 1;
    while (end < rows.length && bytes + rows[end][2].length <= CHUNK_BYTES) bytes += rows[end++][2].length;
    const group = rows.slice(i, end);
    await insert(
      `INSERT INTO session_chunks (projectId, sessionId, part, seq, data) VALUES ${group.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
      ...group.flatMap(([part, seq, data]) => [projectId, sessionId, part, seq, data]),
    );
    i = end;
  }
}


/** Writes content inside a write transaction run by withStagedContent. */
export interface ContentWrites {
  /** Replaces the session's content (see writeContent; `fresh`: its row was inserted in this transaction); in s3 mode with objects staged before the transaction. */
  write(tx: Tx, projectId: string, sessionId: string, parts: ContentParts, fresh?: boolean): Promise<void>;
}

/** Thrown inside the transaction to roll it back: these parts are to be staged first. */
class NotStaged extends Error {
  constructor(
    readonly sessionId: string,
    readonly parts: ContentParts,
  ) {
    super('content to be staged before the write transaction');
  }
}

/** Transactions run before giving up on content that changes each time it is staged. */
const ROUNDS = 4;

/**
 * Runs `run` (which runs one write transaction, and may run it again) with a `content.write`
 * that never uploads inside the transaction. In db mode the content is written in the
 * transaction as chunk rows. In s3 mode, content not yet staged rolls the transaction back,
 * is uploaded with no transaction open, and `run` runs again: the second time its parts are
 * the ones staged (the same bytes) and only rows are written. Content staged and then not
 * written (the transaction took another path, or failed) is the sweep's.
 *
 * `first`: content the caller expects to write (its parts, exactly as `run` will pass them),
 * staged before the first transaction, so that in s3 mode one transaction does (rather than one
 * rolled back, then another). Content then not written is the sweep's, like any other.
 */
export async function withStagedContent<T>(
  run: (content: ContentWrites) => Promise<T>,
  first?: { sessionId: string; parts: ContentParts } | null,
): Promise<T> {
  // (In db mode stageContent uploads nothing: the transaction writes the parts as rows.)
  let staged: StagedContent | null = first ? await stageContent(first.sessionId, first.parts) : null;
  for (let round = 1; ; round++) {
    const content: ContentWrites = {
      async write(tx, projectId, sessionId, parts, fresh) {
        if (contentStore().writeTo !== 's3') return writeContent(tx, projectId, await stageContent(sessionId, parts), fresh);
        if (!staged || !isStaged(staged, sessionId, parts)) throw new NotStaged(sessionId, parts);
        await writeContent(tx, projectId, staged, fresh);
      },
    };
    try {
      return await run(content);
    } catch (err) {
      if (!(err instanceof NotStaged)) throw err;
      if (round >= ROUNDS) throw new Error(`the content of session ${err.sessionId} changed each time it was staged; try again`);
      staged = await stageContent(err.sessionId, err.parts);
    }
  }
}
