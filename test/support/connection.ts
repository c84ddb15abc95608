/**
 * A test's own database connection, in a module of its own: jest's global setup (support/global-setup.ts,
 * support/mariadb-pair.ts) loads it too, and cannot load the application's generated Prisma client
 * that support/db.ts brings in.
 */
import * as mariadb from 'mariadb';

/**
 * A connection of a test's own. The driver's connect timeout (1 s by default) is a timer in this
 * process: a test worker busy for a second (two cores, a full run) fires it before it reads the
 * server's answer, so tests wait 10 s. Tests about refused or unreachable servers set their own.
 */
export function testConnection(options: mariadb.ConnectionConfig): Promise<mariadb.Connection> {
  return mariadb.createConnection({ ...options, connectTimeout: 10_000 });
}
