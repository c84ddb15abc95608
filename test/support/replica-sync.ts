import type { DbHandles } from '../../src/db/client';
import { sqlOn } from '../../src/data/sql';

/**
 * With a read replica (TEST_REPLICA=1, support/global-setup.ts): waits until it has applied
 * everything the primary has. A test's own statements behind the service's back (not made for a
 * user) carry no user's write position, so the service may read them on the replica a moment
 * later, as it would any other client's. Without a replica, returns at once.
 */
export async function replicaCaughtUp(db: DbHandles, timeoutS = 30): Promise<void> {
  if (!db.replica) return;
  const [{ p }] = await db.writes.query<{ p: string }>('SELECT @@global.gtid_binlog_pos AS p');
  const [{ w }] = await sqlOn(db.replica.pool).query<{ w: unknown }>('SELECT MASTER_GTID_WAIT(?, ?) AS w', p, timeoutS);
  if (w === null || Number(w) !== 0) throw new Error(`the replica did not reach ${p} within ${timeoutS} s`);
}
