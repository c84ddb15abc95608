import * as mariadb from 'mariadb';
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaClient } from '../generated/prisma/client';

// DATETIME columns hold UTC wall-clock values. Prisma reads and writes them as UTC, but the
// mariadb driver converts with the process's local zone whatever its `timezone` option says, so
// raw statements and NOW(3) would disagree with Prisma by the machine's UTC offset (keys
// expiring hours early or late). The process therefore keeps its clock in UTC.
process.env.TZ = 'UTC';

export type { Prisma } from '../generated/prisma/client';

/** Raw statements with Prisma's method names, so services can take either. */
export interface RawQueryable {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

export interface DbHandles {
  prisma: PrismaClient;
  /**
   * Hot read paths (lists, single-session reads, content) go straight to the driver pool: the
   * same SQL through Prisma's raw-query path cost about half the throughput in bench/run.ts.
   */
  reader: RawQueryable;
  /** The driver pool under Prisma, shared: writes, the search worker and health checks use it. */
  pool: mariadb.Pool;
  /**
   * Connections of their own for reads (contract §12: uploads can never starve reads). `reader`
   * and snapshots use it.
   */
  readPool: mariadb.Pool;
  /** Runs `fn` on one consistent snapshot (one committed version of everything it reads). */
  withSnapshot<T>(fn: (reader: RawQueryable) => Promise<T>): Promise<T>;
  /**
   * A snapshot taken on first use and held until `release()`: for a response that reads in
   * several steps (a GraphQL query, a streamed download).
   */
  lazySnapshot(): LazySnapshot;
  close(): Promise<void>;
}

export interface LazySnapshot extends RawQueryable {
  release(): Promise<void>;
}

export function connectionOptions(databaseUrl: string, withDatabase = true): mariadb.PoolConfig {
  const u = new URL(databaseUrl);
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  return {
    host: u.hostname || '127.0.0.1',
    port: u.port ? Number(u.port) : 3306,
    user: decodeURIComponent(u.username || 'root'),
    password: decodeURIComponent(u.password || ''),
    database: withDatabase && database ? database : undefined,
    connectTimeout: 1000,
    // A healthy database under a burst is waited for (contract §12); an unreachable one is told
    // apart by the watchdog (src/http/db-watchdog.ts), not by how long a connection takes.
    acquireTimeout: 60_000,
    connectionLimit: Number(u.searchParams.get('connection_limit') ?? 10),
    // Timestamps are written and read as UTC wall-clock values.
    timezone: 'Z',
    // Large uploads travel as one statement.
    maxAllowedPacket: 1024 * 1024 * 1024,
    bigIntAsNumber: true,
    insertIdAsNumber: true,
    decimalAsNumber: true,
  };
}

export function createDb(databaseUrl: string): DbHandles {
  const pool = mariadb.createPool(connectionOptions(databaseUrl));
  // The driver throws a connection's fatal socket error (e.g. ECONNRESET when the server dies)
  // from inside a promise when that connection has no 'error' listener — an unhandled rejection
  // that would end the process. The pool already replaces broken connections; listening here
  // only keeps the error from escaping.
  pool.on('connection', (conn: unknown) => {
    const c = conn as { on?: (event: string, fn: (err: unknown) => void) => void };
    c.on?.('error', () => undefined);
  });
  const adapter = new PrismaMariaDb(pool, { database: connectionOptions(databaseUrl).database });
  const prisma = new PrismaClient({ adapter });
  const base = connectionOptions(databaseUrl);
  // Grown on demand: most processes (CLI, tests) read little. (minimumIdle 0 makes the driver's
  // pool hand out nothing at all, mariadb 3.4.5.)
  const readPool = mariadb.createPool({ ...base, minimumIdle: 1, idleTimeout: 30 });
  readPool.on('connection', (conn: unknown) => {
    const c = conn as { on?: (event: string, fn: (err: unknown) => void) => void };
    c.on?.('error', () => undefined);
  });
  const reader = queryable(readPool);
  return {
    prisma,
    reader,
    pool,
    readPool,
    async withSnapshot(fn) {
      const snap = lazySnapshotOn(readPool);
      try {
        return await fn(snap);
      } finally {
        await snap.release();
      }
    },
    lazySnapshot: () => lazySnapshotOn(readPool),
    async close() {
      await prisma.$disconnect().catch(() => undefined);
      await pool.end().catch(() => undefined);
      await readPool.end().catch(() => undefined);
    },
  };
}

export function queryable(q: { query: mariadb.Pool['query'] }): RawQueryable {
  return {
    $queryRawUnsafe: (query, ...values) => q.query({ sql: query }, values) as Promise<any>,
    $executeRawUnsafe: async (query, ...values) => Number((await q.query({ sql: query }, values)).affectedRows ?? 0),
  };
}

/**
 * InnoDB's consistent snapshot: every statement on the connection sees the database as of the
 * START TRANSACTION, whatever commits meanwhile (a writer replacing the session row and its
 * chunks commits both at once, so a snapshot holds the old version or the new one, never a mix).
 */
function lazySnapshotOn(readPool: mariadb.Pool): LazySnapshot {
  let conn: Promise<mariadb.PoolConnection> | null = null;
  let released = false;
  const open = (): Promise<mariadb.PoolConnection> =>
    (conn ??= (async () => {
      const c = await readPool.getConnection();
      try {
        await c.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
        await c.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
      } catch (err) {
        await c.destroy();
        throw err;
      }
      if (released) {
        await c.query('ROLLBACK').catch(() => undefined);
        c.release();
        throw new Error('snapshot already released');
      }
      return c;
    })());
  return {
    async $queryRawUnsafe(query, ...values) {
      const c = await open();
      return (await c.query({ sql: query }, values)) as any;
    },
    async $executeRawUnsafe(query, ...values) {
      const c = await open();
      return Number((await c.query({ sql: query }, values)).affectedRows ?? 0);
    },
    async release() {
      if (released) return;
      released = true;
      if (!conn) return;
      const c = await conn.catch(() => null);
      if (!c) return;
      try {
        await c.query('ROLLBACK');
        await c.release();
      } catch {
        await Promise.resolve(c.destroy()).catch(() => undefined);
      }
    },
  };
}

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const opts = connectionOptions(databaseUrl, false);
  const name = connectionOptions(databaseUrl).database;
  if (!name) throw new Error('DATABASE_URL names no database');
  const conn = await mariadb.createConnection({ ...opts, connectTimeout: 5000 });
  try {
    await conn.query(
      `CREATE DATABASE IF NOT EXISTS \`${name.replace(/`/g, '``')}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`,
    );
  } finally {
    await conn.end();
  }
}
