/**
 * The baseline for REST reads: a minimal node:http server on the plain mariadb driver that
 * authenticates the same way (JWT verify + key row), runs the same SQL (the service's own statements
 * from src/data, on the same driver pool, so the same text and protocol) and writes the same JSON
 * as the service, with no framework and no ORM. Its answers carry the service's headers too
 * (request id, security headers, rate-limit figures, validators, Cache-Control, Vary): the same
 * bytes on the wire, so that a ratio compares the work of answering, not the size of the answer.
 *
 * The rule: if the baseline does something the service must not (or the reverse), the baseline
 * is changed so that both do the same work. So it also does the work every request of the
 * service is required to do (docs/benchmarks.md, "REST reads"), with the same libraries
 * configured the same way:
 * - rate limits (rate-limiter-flexible): the address's failed-authentication count is read
 *   before the token is checked, then one point of the user's hourly REST budget is spent, and
 *   the X-RateLimit-* headers carry that result. In memory, or in Redis (RateLimiterRedis on
 *   ioredis with the in-memory limiter as insurance) when REDIS_URL is set, as the service;
 * - one request log line per request at `info` (pino through src/logger.ts, to stdout, with the
 *   same fields), written when LOG_LEVEL lets it through (default `info`, as the service);
 * - the /metrics observation of each request (prom-client: http_requests_total and
 *   http_request_duration_seconds with the same labels and buckets, default metrics collected).
 * Not added: the service's database watchdog, admission of bodies, CORS and the unread-body
 * guard (a read without Origin or body skips the last two).
 * Run: DATABASE_URL=... JWT_SECRET=... PORT=... [REDIS_URL=... NAMESPACE=...] [LOG_LEVEL=...] npx tsx bench/baseline-server.ts
 */
import http from 'node:http';
import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';
import Redis from 'ioredis';
import * as mariadb from 'mariadb';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { connectionOptions } from '../src/db/client';
import { CHUNK_BYTES } from '../src/data/content';
import { keyWithUser } from '../src/data/api-keys';
import { countSessions, sessionsInOrder } from '../src/data/session-pages';
import { sessionWithProject } from '../src/data/sessions';
import type { SessionRow } from '../src/domain/session-row';
import { projectOwnerId } from '../src/data/projects';
import { sqlOn } from '../src/data/sql';
import { clientKeyOf } from '../src/http/rate-limit';
import { API_SECURITY_HEADERS } from '../src/http/security';
import { createLogger } from '../src/logger';
import { httpRequestMetrics } from '../src/metrics';
import { presentSession } from '../src/services/presenters/session';

const pool = mariadb.createPool({ ...connectionOptions(process.env.DATABASE_URL!), connectionLimit: 10 });
// The service's statements run on the same pool through src/data (the same text, the same protocol).
const sql = sqlOn(pool);
// A KeyObject built once, as the service does (src/auth/tokens.ts): handing jsonwebtoken the string
// makes it try createPublicKey first on every call, a third of a cheap request's CPU.
const secret = crypto.createSecretKey(Buffer.from(process.env.JWT_SECRET!));

// Rate limits as the service sets them up (src/http/rate-limit.ts): per user per hour, and the
// failed-authentication count per address over 15 minutes, under this process's own prefix.
const NAMESPACE = `${process.env.NAMESPACE ?? 'bench'}-baseline`;
const REST_PER_HOUR = Number(process.env.RATE_LIMIT_REST_PER_HOUR ?? 1000);
const AUTH_FAILURE_LIMIT = Number(process.env.AUTH_FAILURE_LIMIT ?? 20);
const redis = process.env.REDIS_URL
  ? new Redis(process.env.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false }).on('error', () => undefined)
  : null;
const limiter = (name: string, points: number, duration: number): RateLimiterAbstract => {
  const memory = new RateLimiterMemory({ keyPrefix: `${NAMESPACE}:rl:${name}`, points, duration });
  if (!redis) return memory;
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${NAMESPACE}:rl:${name}`,
    points,
    duration,
    rejectIfRedisNotReady: true,
    insuranceLimiter: memory,
  });
};
const restLimit = limiter('rest', REST_PER_HOUR, 3600);
const authFailures = limiter('authfail', AUTH_FAILURE_LIMIT, 15 * 60);

// The request log line (src/http/request-context.ts) and the /metrics observation (src/metrics.ts).
const logger = createLogger(process.env.LOG_LEVEL ?? 'info');
const registry = new Registry();
collectDefaultMetrics({ register: registry });
const { requests, latency } = httpRequestMetrics(registry);

interface Exchange {
  id: string;
  route: string;
  userId: string | null;
  /** The X-RateLimit-* headers of the limiter's answer. */
  limits: Array<string | number>;
}

async function auth(req: http.IncomingMessage, x: Exchange): Promise<string | null> {
  // An address over the failed-authentication limit would be refused before its token is tried.
  const address = clientKeyOf(req.socket.remoteAddress ?? 'unknown');
  const failures = await authFailures.get(address).catch(() => null);
  if (failures && failures.consumedPoints > AUTH_FAILURE_LIMIT) return null;
  const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
  if (!m) return null;
  let userId: string | null = null;
  try {
    const c = jwt.verify(m[1], secret, { algorithms: ['HS256'] }) as { sub: string; jti: string };
    // The service's credential read (src/data/api-keys.ts): the key, its user's role and state and
    // their team memberships, which the access rule needs, in the same statement.
    const key = await keyWithUser(sql, c.jti);
    userId = key && key.userId === c.sub && !key.revokedAt && !key.disabledAt ? c.sub : null;
  } catch {
    userId = null;
  }
  if (!userId) return null;
  x.userId = userId;
  // One point of the user's REST budget (nothing is refused at the bench's limits).
  let r: RateLimiterRes;
  try {
    r = await restLimit.consume(userId, 1);
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) return userId;
    r = err;
  }
  x.limits = [
    'X-RateLimit-Limit',
    String(REST_PER_HOUR),
    'X-RateLimit-Remaining',
    String(Math.max(0, REST_PER_HOUR - r.consumedPoints)),
    'X-RateLimit-Reset',
    String(Math.ceil((Date.now() + r.msBeforeNext) / 1000)),
  ];
  return userId;
}

const SECURITY = API_SECURITY_HEADERS.flat();
/** The headers every answer of the service starts with, then `more`, flat as writeHead takes them. */
const headers = (x: Exchange, ...more: Array<string | number>): Array<string | number> => ['X-Request-Id', x.id, ...SECURITY, ...x.limits, ...more];

const send = (res: http.ServerResponse, x: Exchange, status: number, body: unknown) => {
  const s = JSON.stringify(body);
  res.writeHead(status, headers(x, 'Content-Type', 'application/json; charset=utf-8', 'Content-Length', Buffer.byteLength(s)));
  res.end(s);
};

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const LIST_ROUTE = '/api/v1/projects/:projectId/sessions';
const RECENT_ROUTE = '/api/v1/sessions/recent';
const SESSION_ROUTE = '/api/v1/projects/:projectId/sessions/:sessionId';
// Every answer, a failure included, is sent inside: the server only starts it.
const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
  const url = new URL(req.url!, 'http://x');
  const given = req.headers['x-request-id'];
  const x: Exchange = {
    id: typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : crypto.randomUUID(),
    // The route pattern, set where the path is matched (never ids).
    route: '/api',
    userId: null,
    limits: [],
  };
  const startedAt = process.hrtime.bigint();
  res.on('finish', () => {
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    logger.info({ reqId: x.id, method: req.method, route: x.route, status: res.statusCode, durationMs: Math.round(seconds * 1e4) / 10, userId: x.userId });
    requests.inc({ method: req.method, route: x.route, status: String(res.statusCode) });
    latency.observe({ method: req.method, route: x.route }, seconds);
  });
  try {
    const userId = await auth(req, x);
    if (!userId) {
      await authFailures.consume(clientKeyOf(req.socket.remoteAddress ?? 'unknown'), 1).catch(() => undefined);
      return send(res, x, 401, { success: false, error: 'Invalid session token' });
    }
    let m: RegExpExecArray | null;
    if ((m = /^\/api\/v1\/projects\/([^/]+)\/sessions$/.exec(url.pathname))) {
      x.route = LIST_ROUTE;
      const projectId = decodeURIComponent(m[1]);
      const owner = await projectOwnerId(sql, projectId);
      if (owner !== userId) return send(res, x, 404, { success: false, error: 'Project not found' });
      // The service's statements for the page and the count (src/data/sessions.ts).
      const filters = { projectIds: [projectId] };
      const rows: SessionRow[] = await sessionsInOrder(sql, { scopes: [userId], filters, order: 'UPDATED_AT_DESC', count: 201 });
      const n = await countSessions(sql, [userId], filters);
      return send(res, x, 200, {
        success: true,
        data: { sessions: rows.slice(0, 200).map((r) => presentSession(r)), total: Number(n), projectId, nextCursor: null },
      });
    }
    if (url.pathname === RECENT_ROUTE) {
      x.route = RECENT_ROUTE;
      const limit = Number(url.searchParams.get('limit') ?? 5);
      const rows = await sessionsInOrder(sql, { scopes: [userId], filters: {}, order: 'UPDATED_AT_DESC', count: limit });
      const sessions = rows.map((r) => presentSession(r, false));
      return send(res, x, 200, { success: true, data: { sessions, total: sessions.length } });
    }
    if ((m = /^\/api\/v1\/projects\/([^/]+)\/sessions\/([^/]+)$/.exec(url.pathname))) {
      x.route = SESSION_ROUTE;
      const [projectId, sessionId] = [decodeURIComponent(m[1]), decodeURIComponent(m[2]).toLowerCase()];
      // A GET reads the row and a markdown of one chunk in one statement, one consistent version
      // (as the service does: src/data/sessions.ts, sessionWithProject with `inline`).
      // The service's statement (src/data/sessions.ts), with the project's owner and appearance.
      const inline = req.method === 'HEAD' ? undefined : ({ part: 'markdown', upTo: CHUNK_BYTES } as const);
      const row = await sessionWithProject(sql, projectId, sessionId, inline);
      if (!row?.id || row.ownerId !== userId) return send(res, x, 404, { success: false, error: 'Session not found' });
      const validators = [
        'ETag',
        row.etag!,
        'Last-Modified',
        row.updatedAt!.toUTCString(),
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
        res.writeHead(200, headers(x, ...validators, 'Vary', 'Accept', 'Content-Length', String(row.markdownSize)));
        return res.end();
      }
      let md: Buffer | undefined = (row.inlineData as Buffer | null) ?? Buffer.alloc(0);
      if (md.length !== Number(row.markdownSize)) {
        // Larger than one chunk (not in this bench): the chunks after the row, as before.
        const chunks = await pool.query('SELECT data FROM session_chunks WHERE projectId = ? AND sessionId = ? AND part = ? ORDER BY seq', [
          projectId,
          sessionId,
          'markdown',
        ]);
        md = Buffer.concat(chunks.map((c: { data: Buffer }) => c.data));
      }
      res.writeHead(200, headers(x, 'Vary', 'Accept', ...validators, 'Content-Type', 'text/markdown; charset=utf-8', 'Content-Length', md.length));
      return res.end(md);
    }
    send(res, x, 404, { success: false, error: 'Not found' });
  } catch {
    send(res, x, 500, { success: false, error: 'Internal server error' });
  }
};

const server = http.createServer((req, res) => void handle(req, res));
// As the service's (src/main.ts): the same Keep-Alive header.
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('baseline listening'));
// Exits through process.exit so that `node --cpu-prof` writes its profile (bench/profile-rest.ts).
process.on('SIGTERM', () => process.exit(0));
