/**
 * Session content (markdown, raw data) lives in session_chunks, in pieces of at most CHUNK_BYTES,
 * apart from the session row. Reads concatenate the pieces in order; writes replace them whole
 * inside the caller's transaction, so a reader sees the old content or the new, never a mix.
 */
export const CHUNK_BYTES = 1024 * 1024;

export type ContentPart = 'markdown' | 'raw';

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

/** Replaces both parts of a session's content; call inside the write transaction. */
export async function writeContent(
  tx: RawQueryable,
  projectId: string,
  sessionId: string,
  parts: Record<ContentPart, Buffer>,
): Promise<void> {
  await tx.$executeRawUnsafe('DELETE FROM session_chunks WHERE projectId = ? AND sessionId = ?', projectId, sessionId);
  for (const part of ['markdown', 'raw'] as const) {
    const buf = parts[part];
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
