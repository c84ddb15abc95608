/**
 * The content store. Session content (markdown, raw data, and the upload CLI's session data) lives
 * in session_chunks, in pieces of at most CHUNK_BYTES, apart from the session row. Reads
 * concatenate the pieces in order; writes replace them whole inside the caller's transaction, so a
 * reader sees the old content or the new, never a mix.
 */
import { inScopes, marks, toBuffer, type Sql } from './sql';

export const CHUNK_BYTES = 1024 * 1024;

/** 'session': the upload CLI's session data, a third part treated like raw data. */
export type ContentPart = 'markdown' | 'raw' | 'session';

/**
 * The part holding the markdown's stored exchange index (src/domain/exchanges.ts), written and
 * removed with the markdown, so that it is always of the markdown beside it.
 */
const EXCHANGES_PART = 'exchidx';

export function readContent(db: Sql, projectId: string, sessionId: string, part: ContentPart): Promise<Buffer> {
  return readPart(db, projectId, sessionId, part);
}

/** A stored part's pieces joined in order (empty when it has none). */
async function readPart(db: Sql, projectId: string, sessionId: string, part: ContentPart | typeof EXCHANGES_PART): Promise<Buffer> {
  const rows = await db.query<{ data: unknown }>(
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
export async function* contentChunks(db: Sql, projectId: string, sessionId: string, part: ContentPart): AsyncGenerator<Buffer> {
  for (let seq = 0; ; seq++) {
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

/** Bytes [start, end) of the markdown: only the chunk rows that hold them, only those bytes. */
export function readMarkdownRange(db: Sql, projectId: string, sessionId: string, start: number, end: number): Promise<Buffer> {
  return readContentRange(db, projectId, sessionId, 'markdown', start, end);
}

/** Bytes [start, end) of one part (fewer past its end): only the chunk rows that hold them, only those bytes. */
export async function readContentRange(db: Sql, projectId: string, sessionId: string, part: ContentPart, start: number, end: number): Promise<Buffer> {
  if (end <= start) return Buffer.alloc(0);
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
    if (d === undefined) break;
    parts.push(toBuffer(d));
  }
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}

export interface ContentKey {
  projectId: string;
  sessionId: string;
}

/** Markdown of several of a user's sessions in one statement, keyed `${projectId}/${sessionId}`. */
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
  return out;
}

/** The stored exchange index of a session's markdown, or null when none was stored. */
export async function readStoredExchangeIndex(db: Sql, projectId: string, sessionId: string): Promise<Buffer | null> {
  const stored = await readPart(db, projectId, sessionId, EXCHANGES_PART);
  return stored.length > 0 ? stored : null;
}

/**
 * Replaces markdown and raw data of a session, and its session data when `parts.session` is given
 * (an upload without session data keeps the stored one), and the markdown's exchange index (kept
 * only when `parts.exchanges` is given); call inside the write transaction.
 */
export async function writeContent(
  tx: Sql,
  projectId: string,
  sessionId: string,
  parts: { markdown: Buffer; raw: Buffer; session?: Buffer; exchanges?: Buffer | null },
): Promise<void> {
  const content: ContentPart[] = parts.session ? ['markdown', 'raw', 'session'] : ['markdown', 'raw'];
  const replaced: string[] = [...content, EXCHANGES_PART];
  await tx.execute(
    `DELETE FROM session_chunks WHERE projectId = ? AND sessionId = ? AND part IN (${marks(replaced)})`,
    projectId,
    sessionId,
    ...replaced,
  );
  const written: Array<[string, Buffer]> = content.map((part) => [part, parts[part]!]);
  if (parts.exchanges) written.push([EXCHANGES_PART, parts.exchanges]);
  // Chunks go through the binary protocol where there is one: no escaping of 1 MiB on the event loop.
  const insert = tx.executeBinary ? tx.executeBinary.bind(tx) : tx.execute.bind(tx);
  for (const [part, buf] of written) {
    // One row even for empty content, so that "no rows" can only mean "no session".
    for (let seq = 0, off = 0; seq === 0 || off < buf.length; seq++, off += CHUNK_BYTES) {
      await insert(
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

/** The markdown chunks of these sessions (any owner), in one statement: one version each, in order. */
export async function markdownChunksOf(db: Sql, keys: readonly ContentKey[]): Promise<Array<{ projectId: string; sessionId: string; data: Buffer }>> {
  const rows = await db.query<{ projectId: string; sessionId: string; data: unknown }>(
    `SELECT projectId, sessionId, data FROM session_chunks
      WHERE part = 'markdown' AND (${keys.map(() => '(projectId = ? AND sessionId = ?)').join(' OR ')})
      ORDER BY projectId, sessionId, seq`,
    ...keys.flatMap((k) => [k.projectId, k.sessionId]),
  );
  return rows.map((r) => ({ projectId: r.projectId, sessionId: r.sessionId, data: toBuffer(r.data) }));
}
