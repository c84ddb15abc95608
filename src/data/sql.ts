import type * as mariadb from 'mariadb';

/**
 * The one queryable shape of the data layer: statements on the mariadb driver, whether through a
 * pool, one connection inside a transaction, or a read snapshot. Hot paths use the driver rather
 * than Prisma's raw-query path (same SQL, about half the throughput through Prisma in
 * bench/run.ts; content travels in 1 MiB parameters Prisma would serialise on the event loop).
 */
export interface Sql {
  /** Marks a value built here (sqlOn, snapshotOn, a transaction): a bare driver pool has `query` and `execute` of other shapes. */
  readonly isSql: true;
  /** The rows a statement returns: a read, never a statement that changes rows (a read replica routes by it). */
  query<T = Record<string, unknown>>(sql: string, ...values: unknown[]): Promise<T[]>;
  /** How many rows a statement changed: every statement that changes rows goes through here (or executeBinary). */
  execute(sql: string, ...values: unknown[]): Promise<number>;
  /**
   * `execute` through the binary protocol (a prepared statement, cached per connection) where the
   * driver offers it: a Buffer parameter is copied into the packet as it is, where the text
   * protocol escapes it byte by byte on the event loop (about 5 ms per MiB, more on a busy CPU).
   * For statements that carry content chunks.
   */
  executeBinary?(sql: string, ...values: unknown[]): Promise<number>;
}

/** A snapshot taken on first use and held until `release()`. */
export interface Snapshot extends Sql {
  release(): Promise<void>;
}

/** What the driver answers to a statement that returns no rows. */
type UpsertResult = { affectedRows?: number | bigint };

/**
 * No values → none passed: the driver then leaves a `?` in the text alone (a migration file's comment, say).
 * The statement goes to the driver as a string: given an object (`{ sql }`), the driver copies all
 * its connection options into a new object for every statement (mariadb 3.4's Parser), which cost
 * about 60 µs of CPU per request and slowed the row decoding that reads those options.
 */
const valuesOf = (values: unknown[]) => (values.length ? values : undefined);

/** Statements marked by `prepared`: read through the binary protocol wherever they are run. */
const PREPARED = new Set<string>();
/** How many texts `prepared` marks at most (module constants first, then shapes as they come). */
const PREPARED_MAX = 512;

/**
 * Marks a read of fixed shape run on every request (the credential, one session) to go through a
 * prepared statement, cached per connection by the driver: MariaDB then neither parses nor plans
 * it again, and the binary rows cost the driver less to decode. Measured on the credential read:
 * 230 → 120 µs of database CPU, 145 → 95 µs of ours (bench/statements.ts).
 * The mark travels with the text, so every wrapper of `Sql` (snapshots, the replica's router)
 * passes it through unchanged; only the driver's leaves (sqlOn, snapshotOn) look at it. A text
 * may depend on the shape of a request (how many owner scopes, which filters) but never on its
 * values beyond that: each text is a statement of its own on every connection (the driver keeps
 * 256 per connection), and past PREPARED_MAX texts new ones are simply not marked. Reads only.
 * Returns `sql`.
 */
export function prepared(sql: string): string {
  // A text built per request (lists, counts) is marked already from its second request on.
  if (PREPARED.has(sql)) return sql;
  // Reads only (the replica's routing and test/architecture/statement-kinds.test.ts rely on it).
  if (!/^\s*SELECT\b/i.test(sql)) throw new Error('prepared() marks reads only');
  if (PREPARED.size < PREPARED_MAX) PREPARED.add(sql);
  return sql;
}

/** MariaDB's ER_MAX_PREPARED_STMT_COUNT_REACHED: the server holds max_prepared_stmt_count statements already. */
const TOO_MANY_PREPARED = 1461;

/**
 * A read on a driver pool or connection, through a prepared statement when its text is marked. A
 * server out of prepared statements (every instance's connections hold some) answers it through
 * the text protocol instead: the same rows, only slower.
 */
async function readOn<T>(q: { query: mariadb.Pool['query']; execute?: mariadb.Pool['execute'] }, sql: string, values: unknown[]): Promise<T[]> {
  if (!q.execute || !PREPARED.has(sql)) return q.query<T[]>(sql, valuesOf(values));
  try {
    return await q.execute<T[]>(sql, values);
  } catch (err) {
    if ((err as { errno?: number }).errno !== TOO_MANY_PREPARED) throw err;
    return q.query<T[]>(sql, valuesOf(values));
  }
}

/** `Sql` over a driver pool or connection. */
export function sqlOn(q: { query: mariadb.Pool['query']; execute?: mariadb.Pool['execute'] }): Sql {
  const execute = q.execute?.bind(q);
  return {
    isSql: true,
    query: <T>(sql: string, ...values: unknown[]) => readOn<T>(q, sql, values),
    execute: async (sql, ...values) => Number((await q.query<UpsertResult>(sql, valuesOf(values))).affectedRows ?? 0),
    ...(execute
      ? { executeBinary: async (sql: string, ...values: unknown[]) => Number((await execute<UpsertResult>({ sql }, values)).affectedRows ?? 0) }
      : {}),
  };
}

/** `?, ?, ?` for a list of values. */
export const marks = (n: number | readonly unknown[]): string =>
  Array(typeof n === 'number' ? n : n.length)
    .fill('?')
    .join(', ');

/**
 * `col IN (?, …)` over the owner scopes a caller reads through (the user's id and the ids of their
 * teams: what projects.ownerId and sessions.userId hold); no scope at all matches nothing.
 */
export const inScopes = (col: string, scopes: readonly string[]): string => (scopes.length === 0 ? '1 = 0' : `${col} IN (${marks(scopes)})`);

/** Driver values of a BLOB column as a Buffer (the driver hands Buffers; anything else is text). */
export function toBuffer(data: unknown): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (data === null || data === undefined) return Buffer.alloc(0);
  return Buffer.from(typeof data === 'string' ? data : String(data as number | bigint | boolean), 'utf8');
}

/**
 * InnoDB's consistent snapshot: every statement on the connection sees the database as of the
 * START TRANSACTION, whatever commits meanwhile (a writer replacing the session row and its
 * chunks commits both at once, so a snapshot holds the old version or the new one, never a mix).
 */
export function snapshotOn(readPool: mariadb.Pool): Snapshot {
  let conn: Promise<mariadb.PoolConnection> | null = null;
  let released = false;
  const open = (): Promise<mariadb.PoolConnection> =>
    (conn ??= (async () => {
      const c = await readPool.getConnection();
      try {
        await c.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
        await c.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
      } catch (err) {
        c.destroy();
        throw err;
      }
      if (released) {
        await c.query('ROLLBACK').catch(() => undefined);
        void c.release();
        throw new Error('snapshot already released');
      }
      return c;
    })());
  return {
    isSql: true,
    async query<T>(sql: string, ...values: unknown[]) {
      return readOn<T>(await open(), sql, values);
    },
    async execute(sql, ...values) {
      const c = await open();
      return Number((await c.query<UpsertResult>(sql, valuesOf(values))).affectedRows ?? 0);
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

/** The database's clock (NOW(3)): times compared with rows' NOW(3) values come from it. */
export async function databaseNow(db: Sql): Promise<Date> {
  const [{ now }] = await db.query<{ now: Date }>('SELECT NOW(3) AS now');
  return now;
}
