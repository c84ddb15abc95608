import * as mariadb from 'mariadb';
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaClient } from '../generated/prisma/client';
import { createDatabaseIfMissing } from '../data/migrations';
import { createSignals, type DataSignals } from '../data/signal';
import { snapshotOn, sqlOn, type Snapshot, type Sql } from '../data/sql';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { createReplica, type Replica, type ReplicaOptions } from './replica';

/**
 * DATETIME columns hold UTC wall-clock values. Prisma reads and writes them as UTC, but the
 * mariadb driver converts with the process's local zone whatever its `timezone` option says, so
 * raw statements and NOW(3) would disagree with Prisma by the machine's UTC offset (keys
 * expiring hours early or late). A process that talks to the database therefore keeps its clock
 * in UTC: the entry points (src/main.ts, the CLI, migrations, the test setup) call this first, and
 * `connectionOptions` calls it too, so no script that opens a connection can forget it. Importing
 * this module changes nothing.
 */
export function useUtcClock(): void {
  if (process.env.TZ !== 'UTC') process.env.TZ = 'UTC';
}

export interface DbHandles {
  /**
   * Prisma's client over the same pool, made on first use. The service's statements all live in
   * src/data on the driver pool (measured faster); tests and one-off scripts use this.
   */
  readonly prisma: PrismaClient;
  /**
   * Statements on the read pool (src/data/sql.ts): hot read paths (lists, single-session reads,
   * content) go straight to the driver: the same SQL through Prisma's raw-query path cost about
   * half the throughput in bench/run.ts.
   */
  reads: Sql;
  /** Statements on the write pool, outside a transaction. */
  writes: Sql;
  /** The driver pool under Prisma, shared: writes, transactions, the search worker and health checks use it. */
  pool: mariadb.Pool;
  /**
   * Connections of their own for reads (uploads can never starve reads). `reads`
   * and snapshots use it.
   */
  readPool: mariadb.Pool;
  /**
   * A snapshot taken on first use and held until `release()`: for a response that reads in
   * several steps (a GraphQL query, a streamed download).
   */
  lazySnapshot(): Snapshot;
  /** What committed writes announce (index work written → the search worker wakes). */
  signals: DataSignals;
  /** The read replica (DATABASE_REPLICA_URL), when one is configured. */
  replica: Replica | null;
  /**
   * The same handles for one user's request: with a replica, `reads` and `lazySnapshot` go to it
   * once it has applied that user's last write (src/db/replica.ts), and writes made through
   * `writes` or a transaction on these handles record the user's write position. Without a
   * replica, these very handles.
   */
  forUser(userId: string): DbHandles;
  /** Called by a transaction on these handles after it committed (src/data/transaction.ts). */
  committed?: () => Promise<void>;
  close(): Promise<void>;
}

export function connectionOptions(databaseUrl: string, withDatabase = true): mariadb.PoolConfig {
  useUtcClock();
  const u = new URL(databaseUrl);
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  return {
    host: u.hostname || '127.0.0.1',
    port: u.port ? Number(u.port) : 3306,
    user: decodeURIComponent(u.username || 'root'),
    password: decodeURIComponent(u.password || ''),
    database: withDatabase && database ? database : undefined,
    connectTimeout: 1000,
    // A healthy database under a burst is waited for; an unreachable one is told
    // apart by the watchdog (src/http/db-watchdog.ts), not by how long a connection takes.
    acquireTimeout: 60_000,
    connectionLimit: Number(u.searchParams.get('connection_limit') ?? 10),
    // Timestamps are written and read as UTC wall-clock values.
    timezone: 'Z',
    // Large uploads travel as one statement.
    maxAllowedPacket: 1024 * 1024 * 1024,
    // Prepared statements kept per connection (src/data/sql.ts, `prepared`): the hot reads are a
    // handful of texts; 64 per connection keeps an instance's 30 connections under 2,000 of
    // MariaDB's max_prepared_stmt_count (16,382 by default), shared by every instance.
    prepareCacheLength: 64,
    bigIntAsNumber: true,
    insertIdAsNumber: true,
    decimalAsNumber: true,
  };
}

/**
 * `warmReads`: keep as many read connections open as the write pool holds (the service does; a CLI
 * or a test app opens them as it needs them). The driver opens missing connections one after the
 * other, so a burst of concurrent reads on a cold pool got its first bytes in a staircase.
 */
export function createDb(databaseUrl: string, options: { warmReads?: boolean; replica?: ReplicaOptions } = {}): DbHandles {
  const pool = mariadb.createPool(connectionOptions(databaseUrl));
  // The driver throws a connection's fatal socket error (e.g. ECONNRESET when the server dies)
  // from inside a promise when that connection has no 'error' listener — an unhandled rejection
  // that would end the process. The pool already replaces broken connections; listening here
  // only keeps the error from escaping.
  pool.on('connection', (conn: unknown) => {
    const c = conn as { on?: (event: string, fn: (err: unknown) => void) => void };
    c.on?.('error', () => undefined);
  });
  let prisma: PrismaClient | null = null;
  const base = connectionOptions(databaseUrl);
  // Grown on demand beyond `minimumIdle`: most processes (CLI, tests) read little. (minimumIdle 0 makes the driver's
  // pool hand out nothing at all, mariadb 3.4.5.) Twice the write pool: a streamed download holds
  // its snapshot's connection until the last byte, so ten concurrent large downloads must still
  // leave connections for every other read (and for their own first byte).
  const readPool = mariadb.createPool({
    ...base,
    connectionLimit: 2 * (base.connectionLimit ?? 10),
    minimumIdle: options.warmReads ? (base.connectionLimit ?? 10) : 1,
    idleTimeout: 30,
  });
  readPool.on('connection', (conn: unknown) => {
    const c = conn as { on?: (event: string, fn: (err: unknown) => void) => void };
    c.on?.('error', () => undefined);
  });
  const writes = sqlOn(pool);
  const replica = options.replica
    ? createReplica({ readPool, writes }, options.replica, replicaPoolConfig(options.replica.url, base.database, base.connectionLimit ?? 10))
    : null;
  const db: DbHandles = {
    get prisma() {
      return (prisma ??= new PrismaClient({ adapter: new PrismaMariaDb(pool, { database: base.database }) }));
    },
    reads: sqlOn(readPool),
    writes,
    pool,
    readPool,
    lazySnapshot: () => snapshotOn(readPool),
    signals: createSignals(),
    replica,
    forUser: (userId) => (replica ? userView(db, replica, userId) : db),
    async close() {
      await replica?.close();
      await prisma?.$disconnect().catch(() => undefined);
      await pool.end().catch(() => undefined);
      await readPool.end().catch(() => undefined);
    },
  };
  return db;
}

/**
 * The replica's pool: the replica URL's options, the primary's database unless it names one; as
 * many connections as the read pool (twice its `connection_limit`, else twice the primary's).
 */
function replicaPoolConfig(url: string, primaryDatabase: string | undefined, writeConnections: number): mariadb.PoolConfig {
  const opts = connectionOptions(url);
  const own = new URL(url).searchParams.has('connection_limit');
  return { ...opts, database: opts.database ?? primaryDatabase, connectionLimit: 2 * (own ? (opts.connectionLimit ?? 10) : writeConnections) };
}

/** `base` for one user's request, reading through the replica (see DbHandles.forUser). */
function userView(base: DbHandles, replica: Replica, userId: string): DbHandles {
  const router = replica.router(userId);
  const wrote = async (): Promise<void> => {
    router.wrote();
    await replica.markWrite(userId);
  };
  // Whether a statement wrote is told by the method it went through, not by its text: `query`
  // returns rows and changes none, `execute` (and `executeBinary`) changes rows (the Sql contract,
  // src/data/sql.ts; test/architecture/statement-kinds.test.ts holds src/ to it). Only the latter mark a write.
  const writes: Sql = {
    isSql: true,
    query: (sql, ...values) => base.writes.query(sql, ...values),
    async execute(sql, ...values) {
      const n = await base.writes.execute(sql, ...values);
      await wrote();
      return n;
    },
    ...(base.writes.executeBinary
      ? {
          executeBinary: async (sql: string, ...values: unknown[]) => {
            const n = await base.writes.executeBinary!(sql, ...values);
            await wrote();
            return n;
          },
        }
      : {}),
  };
  return {
    get prisma() {
      return base.prisma;
    },
    reads: router.reads,
    writes,
    pool: base.pool,
    readPool: base.readPool,
    lazySnapshot: () => router.lazySnapshot(),
    signals: base.signals,
    replica,
    forUser: (id) => base.forUser(id),
    committed: wrote,
    close: () => base.close(),
  };
}

/** The database options a configuration asks for beyond its URL (the read replica). */
export function dbOptionsOf(config: Config, logger?: Logger): { replica?: ReplicaOptions } {
  if (!config.databaseReplicaUrl) return {};
  return {
    replica: {
      url: config.databaseReplicaUrl,
      waitMs: config.databaseReplicaWaitMs,
      maxLagMs: config.databaseReplicaMaxLagMs,
      redisUrl: config.redisUrl,
      namespace: config.namespace,
      onProblem: (msg, err) => logger?.warn({ msg, err: err instanceof Error ? err.message : err }),
    },
  };
}

/** Creates the database named in the URL when it does not exist yet; true when it did. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const opts = connectionOptions(databaseUrl, false);
  const name = connectionOptions(databaseUrl).database;
  if (!name) throw new Error('DATABASE_URL names no database');
  const conn = await mariadb.createConnection({ ...opts, connectTimeout: 5000 });
  try {
    return await createDatabaseIfMissing(sqlOn(conn), name);
  } finally {
    await conn.end();
  }
}
