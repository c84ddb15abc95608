/**
 * Session content (markdown, raw data, and the upload CLI's session data) lives in session_chunks, in pieces of at most CHUNK_BYTES,
 * apart from the session row. Reads concatenate the pieces in order; writes replace them whole
 * inside the caller's transaction, so a reader sees the old content or the new, never a mix.
 */
export const CHUNK_BYTES = 1024 * 1024;

/** 'session': the upload CLI's session data (contract §15), a third part treated like raw data. */
export type ContentPart = 'markdown' | 'raw' | 'session';

import type { RawQueryable } from '../db/client';
export type { RawQueryable };

function toBuffer(data: unknown): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(String(data ?? ''), 'utf8');
}

export async function readContent(db: RawQueryable, projectId: string, sessionId: string, part: ContentPart): Promise<Buffer> {
  const rows = await db.$queryRawUnsafe<Array<{ data: unknown }>>(
    'SELECT data FROM session_chunks WHERE projectId = ? AND sessionId = ? AND part = ? ORDER BY seq',
    projectId,
    sessionId,
    part,
  );
  return rows.length === 1 ? toBuffer(rows[0].data) : Buffer.concat(rows.map((r) => toBuffer(r.data)));
}

/**
 * The content one chunk at a time, for streaming: at most CHUNK_BYTES in memory per reader.
 * Call on a snapshot (DbHandles.lazySnapshot) so that all chunks are of one version.
 */
export async function* contentChunks(db: RawQueryable, projectId: string, sessionId: string, part: ContentPart): AsyncGenerator<Buffer> {
  for (let seq = 0; ; seq++) {
    const rows = await db.$queryRawUnsafe<Array<{ data: unknown }>>(
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

/**
 * Replaces markdown and raw data of a session, and its session data when `parts.session` is given
 * (an upload without session data keeps the stored one); call inside the write transaction.
 */
export async function writeContent(
  tx: RawQueryable,
  projectId: string,
  sessionId: string,
  parts: { markdown: Buffer; raw: Buffer; session?: Buffer },
): Promise<void> {
  const replaced: ContentPart[] = parts.session ? ['markdown', 'raw', 'session'] : ['markdown', 'raw'];
  await tx.$executeRawUnsafe(
    `DELETE FROM session_chunks WHERE projectId = ? AND sessionId = ? AND part IN (${replaced.map(() => '?').join(', ')})`,
    projectId,
    sessionId,
    ...replaced,
  );
  for (const part of replaced) {
    const buf = parts[part]!;
    // One row even for empty content, so that "no rows" can only mean "no session".
    for (let seq = 0, off = 0; seq === 0 || off < buf.length; seq++, off += CHUNK_BYTES) {
      await tx.$executeRawUnsafe(
        'INSERT INTO session_chunks (projectId, sessionId, part, seq, data) VALUES (?, ?, ?, ?, ?)',
        projectId,
        sessionId,
        part,
        seq,
        buf.subarray(off, off + CHUNK_BYTES),
      );
    }
  }
}
