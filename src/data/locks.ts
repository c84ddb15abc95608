import type * as mariadb from 'mariadb';
import { sqlOn, type Sql } from './sql';

/**
 * Runs `fn` on one pooled connection that holds the database's named lock `name` (GET_LOCK: one
 * holder across every instance), or gives `{ got: false }` at once when another holder has it.
 *
 * It never waits for the lock: a waiter would sit on a connection of the same pool the holder may
 * need, and a burst of waiters would starve the holder and every other request of connections.
 * `fn` runs on the locked connection itself, so the holder needs no second one either.
 */
export async function tryNamedLock<T>(
  pool: mariadb.Pool,
  name: string,
  fn: (sql: Sql) => Promise<T>,
): Promise<{ got: true; value: T } | { got: false }> {
  const conn = await pool.getConnection();
  try {
    const [got] = await conn.query<{ got: unknown }[]>('SELECT GET_LOCK(?, 0) AS got', [name]);
    if (Number(got?.got) !== 1) return { got: false };
    try {
      return { got: true, value: await fn(sqlOn(conn)) };
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [name]).catch(() => undefined);
    }
  } finally {
    void conn.release();
  }
}
