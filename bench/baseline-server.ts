/**
 * The baseline for REST reads: a minimal node:http server on the plain mariadb driver that
 * authenticates the same way (JWT verify + key row), runs the same SQL and writes the same JSON
 * as the service, with nothing else (no framework, no ORM, no logging, no rate limiting). Its
 * answers carry the service's headers too (request id, security headers, rate-limit figures,
 * validators, Cache-Control, Vary): the same bytes on the wire, so that a ratio compares the work
 * of answering, not the size of the answer.
 * Run: DATABASE_URL=... JWT_SECRET=... PORT=... npx tsx bench/baseline-server.ts
 */
import http from 'node:http';
import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';
import * as mariadb from 'mariadb';
import { connectionOptions } from '../src/db/client';
import { CHUNK_BYTES } from '../src/data/content';
import { SESSION_COLUMNS, type SessionRow } from '../src/data/sessions';
import { API_SECURITY_HEADERS } from '../src/http/security';
import { presentSession } from '../src/services/presenters/session';

const pool = mariadb.createPool({ ...connectionOptions(process.env.DATABASE_URL!), connectionLimit: 10 });
// A KeyObject built once, as the service does (src/auth/tokens.ts): handing jsonwebtoken the string
// makes it try createPublicKey first on every call, a third of a cheap request's CPU.
const secret = crypto.createSecretKey(Buffer.from(process.env.JWT_SECRET!));

async function auth(req: http.IncomingMessage): Promise<string | null> {
  const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
  if (!m) return null;
  try {
    const c = jwt.verify(m[1], secret, { algorithms: ['HS256'] }) as { sub: string; jti: string };
    const rows = await pool.query('SELECT userId, expiresAt, revokedAt, lastUsedAt FROM api_keys WHERE id = ?', [c.jti]);
    return rows[0] && rows[0].userId === c.sub && !rows[0].revokedAt ? c.sub : null;
  } catch {
    return null;
  }
}

const SECURITY = API_SECURITY_HEADERS.flat();
// The rate-limit headers' figures (nothing is limited here: the numbers only fill the headers).
let remaining = 1_000_000_000;
/** The headers every answer of the service starts with, then `more`, flat as writeHead takes them. */
const headers = (...more: Array<string | number>): Array<string | number> => [
  'X-Request-Id',
  crypto.randomUUID(),
  ...SECURITY,
  'X-RateLimit-Limit',
  '1000000000',
  'X-RateLimit-Remaining',
  String(--remaining),
  'X-RateLimit-Reset',
  String(Math.ceil(Date.now() / 1000) + 3600),
  ...more,
];

const send = (res: http.ServerResponse, status: number, body: unknown) => {
  const s = JSON.stringify(body);
  res.writeHead(status, headers('Content-Type', 'application/json; charset=utf-8', 'Content-Length', Buffer.byteLength(s)));
  res.end(s);
};

// Every answer, a failure included, is sent inside: the server only starts it.
const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
  try {
    const userId = await auth(req);
    if (!userId) return send(res, 401, { success: false, error: 'Invalid session token' });
    const url = new URL(req.url!, 'http://x');
    let m: RegExpExecArray | null;
    if ((m = /^\/api\/v1\/projects\/([^/]+)\/sessions$/.exec(url.pathname))) {
      const projectId = decodeURIComponent(m[1]);
      const [owner] = await pool.query('SELECT ownerId FROM projects WHERE id = ?', [projectId]);
      if (!owner) return send(res, 404, { success: false, error: 'Project not found' });
      const rows: SessionRow[] = await pool.query(
        `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.userId = ? AND s.projectId IN (?) ORDER BY s.updatedAt DESC, s.projectId DESC, s.id DESC LIMIT ?`,
        [userId, projectId, 201],
      );
      const [{ n }] = await pool.query('SELECT COUNT(*) AS n FROM sessions s WHERE s.userId = ? AND s.projectId IN (?)', [userId, projectId]);
      return send(res, 200, {
        success: true,
        data: { sessions: rows.slice(0, 200).map((r) => presentSession(r)), total: Number(n), projectId, nextCursor: null },
      });
    }
    if (url.pathname === '/api/v1/sessions/recent') {
      const limit = Number(url.searchParams.get('limit') ?? 5);
      const rows: SessionRow[] = await pool.query(
        `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.userId = ? ORDER BY s.updatedAt DESC, s.projectId DESC, s.id DESC LIMIT ?`,
        [userId, limit + 1],
      );
      const sessions = rows.slice(0, limit).map((r) => presentSession(r, false));
      return send(res, 200, { success: true, data: { sessions, total: sessions.length } });
    }
    if ((m = /^\/api\/v1\/projects\/([^/]+)\/sessions\/([^/]+)$/.exec(url.pathname))) {
      const [projectId, sessionId] = [decodeURIComponent(m[1]), decodeURIComponent(m[2]).toLowerCase()];
      // A GET reads the row and a markdown of one chunk in one statement, one consistent version
      // (as the service does: src/data/sessions.ts, sessionWithProject with `inline`).
      const inline =
        req.method === 'HEAD'
          ? ''
          : ', CASE WHEN s.markdownSize <= ? THEN (SELECT c.data FROM session_chunks c WHERE c.projectId = s.projectId AND c.sessionId = s.id AND c.part = ? AND c.seq = 0) END AS inlineData';
      const [row] = await pool.query(
        `SELECT p.ownerId, ${SESSION_COLUMNS}${inline} FROM projects p LEFT JOIN sessions s ON s.projectId = p.id AND s.id = ? WHERE p.id = ?`,
        [...(inline ? [CHUNK_BYTES, 'markdown'] : []), sessionId, projectId],
      );
      if (!row?.id) return send(res, 404, { success: false, error: 'Session not found' });
      const validators = [
        'ETag',
        row.etag,
        'Last-Modified',
        row.updatedAt.toUTCString(),
        'X-Markdown-Size',
        String(row.markdownSize),
        'X-Raw-Data-Size',
        String(row.rawDataSize),
        'X-Session-Data-Size',
        String(row.sessionDataSize),
        'Cache-Control',
        'private, no-cache',
      ];
      if (req.method === 'HEAD') {
        res.writeHead(200, headers(...validators, 'Vary', 'Accept', 'Content-Length', String(row.markdownSize)));
        return res.end();
      }
      let md: Buffer | undefined = row.inlineData ?? Buffer.alloc(0);
      if (md!.length !== Number(row.markdownSize)) {
        // Larger than one chunk (not in this bench): the chunks after the row, as before.
        const chunks = await pool.query('SELECT data FROM session_chunks WHERE projectId = ? AND sessionId = ? AND part = ? ORDER BY seq', [
          projectId,
          sessionId,
          'markdown',
        ]);
        md = Buffer.concat(chunks.map((c: { data: Buffer }) => c.data));
      }
      res.writeHead(200, headers('Vary', 'Accept', ...validators, 'Content-Type', 'text/markdown; charset=utf-8', 'Content-Length', md!.length));
      return res.end(md);
    }
    send(res, 404, { success: false, error: 'Not found' });
  } catch {
    send(res, 500, { success: false, error: 'Internal server error' });
  }
};

const server = http.createServer((req, res) => void handle(req, res));
// As the service's (src/main.ts): the same Keep-Alive header.
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('baseline listening'));
// Exits through process.exit so that `node --cpu-prof` writes its profile (bench/profile-rest.ts).
process.on('SIGTERM', () => process.exit(0));
