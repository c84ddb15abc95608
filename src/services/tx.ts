import { queryable, type DbHandles } from '../db/client';
import type { RawQueryable } from './content-store';
import type { WorkGuard } from './guard';

export type Tx = RawQueryable;

/** Deadlocks and lock-wait timeouts are the database's way of saying "try again". */
export function isRetryableTxError(err: unknown): boolean {
  let e: any = err;
  for (let i = 0; e && i < 5; i++, e = e.cause) {
    const text = `${e.code ?? ''} ${e.errno ?? ''} ${e.message ?? ''}`;
    if (/P2034|1213|1205|\bdeadlock|lock wait timeout|write conflict/i.test(text)) return true;
    if (e.meta && /1213|1205|deadlock/i.test(JSON.stringify(e.meta))) return true;
  }
  return false;
}

/**
 * Runs `fn` in a transaction on one connection of the driver pool, retrying a few times on
 * deadlock. With a guard, a request the watchdog has answered 503 rolls back instead of
 * committing (see WorkGuard). A healthy database under a burst is waited for (the pool's
 * acquireTimeout is long); an unreachable one is the watchdog's to tell.
 *
 * The driver, not Prisma's interactive transactions: content travels in 1 MiB parameters, which
 * Prisma's query interpreter serialises on the event loop at several times the driver's cost
 * (measured: 20 × 1 MiB inserts, 2.5 s of CPU through Prisma, 0.26 s through the driver).
 */
export function inTransaction<T>(db: Pick<DbHandles, 'pool'>, fn: (tx: Tx) => Promise<T>): Promise<T>;
export function inTransaction<T>(db: Pick<DbHandles, 'pool'>, guard: WorkGuard | undefined, fn: (tx: Tx) => Promise<T>): Promise<T>;
export async function inTransaction<T>(
  db: Pick<DbHandles, 'pool'>,
  a: WorkGuard | undefined | ((tx: Tx) => Promise<T>),
  b?: (tx: Tx) => Promise<T>,
): Promise<T> {
  const fn = typeof a === 'function' ? a : b!;
  const guard = typeof a === 'function' ? undefined : a;
  const attempts = 8;
  for (let attempt = 1; ; attempt++) {
    guard?.check();
    try {
      const conn = await db.pool.getConnection();
      try {
        await conn.beginTransaction();
        try {
          const result = await fn(queryable(conn));
          guard?.beforeCommit();
          await conn.commit();
          return result;
        } catch (err) {
          await conn.rollback().catch(() => undefined);
          throw err;
        }
      } finally {
        await conn.release().catch(() => undefined);
      }
    } catch (err) {
      guard?.commitSettled();
      if (attempt >= attempts || !isRetryableTxError(err)) throw err;
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    } finally {
      guard?.commitSettled();
    }
  }
}
