import type * as mariadb from 'mariadb';
import { isRetryable } from './errors';
import type { DataSignals } from './signal';
import { sqlOn, type Sql } from './sql';

/** A statement runner inside one transaction. */
export interface Tx extends Sql {
  /** Runs `fn` once the transaction has committed (never when it rolls back; once per commit). */
  afterCommit(fn: () => void): void;
  /** The signals of the database written to (hooks emit them after commit). */
  readonly signals: DataSignals;
}

/**
 * What a request's write guard (services/work-guard.ts, WorkGuard) lets a transaction know: aborted
 * requests roll back instead of committing.
 */
interface CommitGuard {
  check(): void;
  beforeCommit(): void;
  commitSettled(): void;
}

export interface TxHandles {
  pool: mariadb.Pool;
  signals: DataSignals;
  /** Awaited after the commit, before the hooks (a read replica records the writer's position). */
  committed?: () => Promise<void>;
}

const ATTEMPTS = 8;

/**
 * Runs `fn` in a transaction on one connection of the driver pool, retrying a few times on
 * deadlock (src/data/errors.ts); after the commit, the hooks `fn` registered run. With a guard, a
 * request the watchdog has answered 503 rolls back instead of committing (see WorkGuard). A
 * healthy database under a burst is waited for (the pool's acquireTimeout is long); an
 * unreachable one is the watchdog's to tell.
 *
 * The driver, not Prisma's interactive transactions: content travels in 1 MiB parameters, which
 * Prisma's query interpreter serialises on the event loop at several times the driver's cost
 * (measured: 20 × 1 MiB inserts, 2.5 s of CPU through Prisma, 0.26 s through the driver).
 */
export function inTransaction<T>(db: TxHandles, fn: (tx: Tx) => Promise<T>): Promise<T>;
export function inTransaction<T>(db: TxHandles, guard: CommitGuard | undefined, fn: (tx: Tx) => Promise<T>): Promise<T>;
export async function inTransaction<T>(
  db: TxHandles,
  a: CommitGuard | undefined | ((tx: Tx) => Promise<T>),
  b?: (tx: Tx) => Promise<T>,
): Promise<T> {
  const fn = typeof a === 'function' ? a : b!;
  const guard = typeof a === 'function' ? undefined : a;
  for (let attempt = 1; ; attempt++) {
    guard?.check();
    const hooks = new Set<() => void>();
    let result: T;
    try {
      const conn = await db.pool.getConnection();
      try {
        await conn.beginTransaction();
        try {
          const tx: Tx = { ...sqlOn(conn), afterCommit: (hook) => void hooks.add(hook), signals: db.signals };
          result = await fn(tx);
          guard?.beforeCommit();
          await conn.commit();
        } catch (err) {
          await conn.rollback().catch(() => undefined);
          throw err;
        }
      } finally {
        await conn.release().catch(() => undefined);
      }
    } catch (err) {
      guard?.commitSettled();
      if (attempt >= ATTEMPTS || !isRetryable(err)) throw err;
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
      continue;
    } finally {
      guard?.commitSettled();
    }
    await db.committed?.().catch(() => undefined);
    for (const hook of hooks) {
      try {
        hook();
      } catch {
        // The write has committed; a hook's failure must not turn it into an error.
      }
    }
    return result;
  }
}
